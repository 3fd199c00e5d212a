package orchestrator

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// store is a session's log as its harness sees it (harness.Session). It
// is the one owner of entry ids: it gives every entry appended without an
// id a deterministic one, so an append retried after a lost
// acknowledgement is a no-op, and names the command each entry applies.
// The harness and the actor append without ids; an id given is kept, never
// rewritten.
//
// Entry ids: the user message of a command is DeriveID("cmd", commandID,
// "user"); any other entry of a command DeriveID("cmd", commandID, type); a
// tool result DeriveID("result", assistantID, toolCallID), the assistant
// entry that made the call last (a model may reuse a call id); anything
// else DeriveID(sid, last sequence, type), which a retry computes again
// because the expected sequence has not moved.
//
// Entries the harness writes for a command without knowing it (a
// model_change for set_model, the aborted reply of an abort...) are named
// through stamps: the actor pushes the command id under the kind of entry that
// will apply it, and the next such entry takes it, in order.
//
// Every entry naming a command also names who sent it: the actor notes each
// command's principal (events.Command.Principal) as it takes the command,
// and Append copies it onto the entry naming that command. A command is
// named by one entry, so the note is dropped once that entry is durable, or
// when the actor finishes the command without one (forgetPrincipal): the
// notes are the commands in flight, not every command a resident session
// ever took.
type store struct {
	sid string // the session id: entry ids are unique within the session
	// applied is called, outside the lock, after an entry naming a command
	// is durable.
	applied func(commandID string)
	// appended, if set, counts each append by its outcome.
	appended func(error)
	// writable, if set, is awaited before every append: it waits while the
	// partition's lease is past its deadline and refuses the append
	// (errFenced) once the partition is given up (partition.awaitWritable).
	// fenced, if set, is cancelled when the partition is given up: an
	// append under way then stops, even one whose caller's context cannot
	// be cancelled.
	writable func(context.Context) error
	fenced   context.Context
	// refused is set once an append was refused by writable: the session
	// is no longer this actor's to write (gone).
	refused atomic.Bool
	// waiting counts appends waiting in writable (tests).
	waiting atomic.Int32

	mu struct {
		sync.Mutex
		s      *session.Session
		stamps map[string][]string
		// calls maps a tool call id to the assistant entry that made it last.
		calls map[string]string
		// principals maps the id of a command in flight to its sender.
		principals map[string]string
	}
}

// notePrincipal records that commandID was sent by principal.
func (st *store) notePrincipal(commandID, principal string) {
	if principal == "" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.mu.principals[commandID] = principal
}

// forgetPrincipal drops the note of commandID, a command finished without
// an entry naming it.
func (st *store) forgetPrincipal(commandID string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.mu.principals, commandID)
}

// principalsInFlight is how many commands' principals the store holds.
func (st *store) principalsInFlight() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.mu.principals)
}

func newStore(s *session.Session, applied func(string)) *store {
	st := &store{sid: s.ID(), applied: applied}
	st.mu.s = s
	st.mu.stamps = map[string][]string{}
	st.mu.calls = map[string]string{}
	st.mu.principals = map[string]string{}
	for _, e := range s.Entries() {
		st.noteCallsLocked(&e)
	}
	return st
}

// Stamp kinds.
const (
	stampAbort = "abort" // the aborted assistant reply
)

func stampKey(e *events.Entry) string {
	if e.Type == events.EntryMessage && e.Message != nil && e.Message.Role == events.RoleAssistant && e.Message.StopReason == events.StopAborted {
		return stampAbort
	}
	return e.Type
}

// stamp queues commandID for the next entry of kind.
func (st *store) stamp(kind, commandID string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.mu.stamps[kind] = append(st.mu.stamps[kind], commandID)
}

// unstamp removes the stamps of kind that no entry took and returns them.
func (st *store) unstamp(kind string) []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	ids := st.mu.stamps[kind]
	delete(st.mu.stamps, kind)
	return ids
}

// Append implements harness.Session.
func (st *store) Append(ctx context.Context, e events.Entry) (events.Entry, error) {
	if st.writable != nil {
		// Before the lock: a wait for the lease blocks no reader.
		st.waiting.Add(1)
		err := st.writable(ctx)
		st.waiting.Add(-1)
		if err != nil {
			if errors.Is(err, errFenced) {
				st.refused.Store(true)
			}
			return events.Entry{}, err
		}
	}
	st.mu.Lock()
	if e.CommandID == "" && e.Type == events.EntryMessage && e.Message != nil && e.Message.CommandID != "" {
		e.CommandID = e.Message.CommandID
	}
	if e.CommandID == "" {
		k := stampKey(&e)
		if q := st.mu.stamps[k]; len(q) > 0 {
			e.CommandID, st.mu.stamps[k] = q[0], q[1:]
		}
	}
	if e.CommandID != "" && e.Principal == "" {
		e.Principal = st.mu.principals[e.CommandID]
	}
	if e.ID == "" {
		e.ID = st.deriveIDLocked(&e)
	}
	if e.V == 0 {
		e.V = events.SchemaVersion
	}
	if st.fenced != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		unhook := context.AfterFunc(st.fenced, cancel)
		defer func() { unhook(); cancel() }()
	}
	rec, err := st.mu.s.Append(ctx, e)
	if st.appended != nil {
		st.appended(err)
	}
	if errors.Is(err, session.ErrDuplicate) {
		// A retry of an append that landed: return it as stored.
		defer st.mu.Unlock()
		delete(st.mu.principals, e.CommandID)
		for _, r := range st.mu.s.Records() {
			if r.Entry.ID == e.ID {
				return r.Entry, nil
			}
		}
		return events.Entry{}, err
	}
	if err != nil {
		st.mu.Unlock()
		return events.Entry{}, err
	}
	st.noteCallsLocked(&rec.Entry)
	delete(st.mu.principals, rec.Entry.CommandID) // the one entry naming it is durable
	st.mu.Unlock()
	if rec.Entry.CommandID != "" && st.applied != nil {
		st.applied(rec.Entry.CommandID)
	}
	return rec.Entry, nil
}

func (st *store) deriveIDLocked(e *events.Entry) string {
	if e.Type == events.EntryMessage && e.Message != nil {
		m := e.Message
		switch {
		case m.Role == events.RoleUser && e.CommandID != "":
			return events.DeriveID("cmd", e.CommandID, "user")
		case m.Role == events.RoleToolResult && m.ToolCallID != "":
			return events.DeriveID("result", st.mu.calls[m.ToolCallID], m.ToolCallID)
		}
	}
	switch e.Type {
	case events.EntryApprovalRequested:
		return events.DeriveID("approval", st.mu.calls[e.ToolCallID], e.ToolCallID)
	case events.EntryApprovalAnswered: // one answer per call, whoever gives it
		return events.DeriveID("answer", st.mu.calls[e.ToolCallID], e.ToolCallID)
	case events.EntryToolResultHeld:
		return events.DeriveID("held", st.mu.calls[e.ToolCallID], e.ToolCallID)
	}
	if e.CommandID != "" {
		return events.DeriveID("cmd", e.CommandID, e.Type)
	}
	return events.DeriveID(st.sid, strconv.FormatUint(st.mu.s.LastSeq(), 10), e.Type)
}

func (st *store) noteCallsLocked(e *events.Entry) {
	if e.Type != events.EntryMessage || e.Message == nil || e.Message.Role != events.RoleAssistant {
		return
	}
	for _, c := range e.Message.ToolCalls() {
		st.mu.calls[c.ID] = e.ID
	}
}

// wireCallID is the id a tool call travels under: unique in the session even
// when a model reuses its call ids, and the same when recovery dispatches it
// again.
func (st *store) wireCallID(toolCallID string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return events.DeriveID("call", st.mu.calls[toolCallID], toolCallID)
}

// Path implements harness.Session: the header and the active path.
func (st *store) Path(context.Context) (*events.Entry, []events.Entry, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	h := st.mu.s.Header()
	leaf := st.mu.s.Leaf()
	if leaf == nil {
		return &h, nil, nil
	}
	path, err := st.mu.s.Path(*leaf)
	return &h, path, err
}

// do runs f with the session under the lock, for reads and direct writes.
func (st *store) do(f func(s *session.Session) error) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return f(st.mu.s)
}

// lost reports whether another writer appended: the session is no longer ours.
func (st *store) lost() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.mu.s.Lost()
}

// gone reports whether the session is no longer this actor's to write:
// another writer appended, or an append was refused because the
// partition's lease is fenced or lost.
func (st *store) gone() bool {
	return st.refused.Load() || st.lost()
}
