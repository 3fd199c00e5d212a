// Package agenttest has small real implementations for tests of code that
// drives the agent core: an in-memory session tree that satisfies
// harness.Session, [TestSession], the conformance suite every
// harness.Session implementation should pass, [Recorder], a provider
// that records what it is sent, and [RunGolden], which runs a golden
// context case (package sessiontreetest) through a harness.
//
// # Concurrency
//
// A Session and a Recorder are safe for concurrent use.
//
// # Errors
//
// Append refuses a leaf entry whose target is not in the session, and
// returns the error set with FailAppends, for tests of write failures.
package agenttest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Session is an in-memory session tree with pi's semantics: each entry is
// a child of the active leaf; a leaf entry moves the active leaf. A
// `session` entry appended first is the header, not a node of the tree.
type Session struct {
	mu      sync.Mutex
	header  *events.Entry
	entries []events.Entry
	byID    map[string]int
	leaf    *string
	fail    error
}

// NewSession returns a session holding entries, appended in order (a
// `session` header first, if it has one).
func NewSession(entries ...events.Entry) *Session {
	s := &Session{byID: make(map[string]int)}
	for _, e := range entries {
		if _, err := s.Append(context.Background(), e); err != nil {
			panic(err) // test setup bug
		}
	}
	return s
}

// FailAppends makes every later Append fail with err (nil = succeed again).
func (s *Session) FailAppends(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

// Append implements harness.Session.
func (s *Session) Append(_ context.Context, e events.Entry) (events.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return events.Entry{}, s.fail
	}
	if e.Type == events.EntrySession {
		if s.header != nil || len(s.entries) > 0 {
			return events.Entry{}, fmt.Errorf("agenttest: a session has one `session` header, its first entry")
		}
		e.ParentID = nil
		s.header = &e
		return e, nil
	}
	if e.ID == "" {
		e.ID = events.NewID()
	} else if i, ok := s.byID[e.ID]; ok {
		return s.entries[i], nil
	}
	if e.Type == events.EntryLeaf && e.TargetID != nil {
		if _, ok := s.byID[*e.TargetID]; !ok {
			return events.Entry{}, fmt.Errorf("agenttest: leaf target %q is not in the session", *e.TargetID)
		}
	}
	e.ParentID = s.leaf
	if e.Timestamp == "" {
		e.Timestamp = events.FormatTime(time.Now())
	}
	s.byID[e.ID] = len(s.entries)
	s.entries = append(s.entries, e)
	if e.Type == events.EntryLeaf {
		s.leaf = e.TargetID
	} else {
		id := e.ID
		s.leaf = &id
	}
	return e, nil
}

// Path implements harness.Session.
func (s *Session) Path(context.Context) (*events.Entry, []events.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var path []events.Entry
	for id := s.leaf; id != nil; {
		e := s.entries[s.byID[*id]]
		path = append(path, e)
		id = e.ParentID
	}
	slices.Reverse(path)
	var h *events.Entry
	if s.header != nil {
		c := *s.header
		h = &c
	}
	return h, path, nil
}

// Entry implements harness.Session.
func (s *Session) Entry(_ context.Context, id string) (events.Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.byID[id]
	if !ok {
		return events.Entry{}, false, nil
	}
	return s.entries[i], true, nil
}

// Entries returns every entry in append order, the header first if the
// session has one.
func (s *Session) Entries() []events.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.header == nil {
		return slices.Clone(s.entries)
	}
	return append([]events.Entry{*s.header}, s.entries...)
}
