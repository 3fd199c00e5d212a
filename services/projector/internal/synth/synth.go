// Package synth generates synthetic session logs for the projector's tests
// and benchmarks: many sessions interleaved, each a plausible run of the
// agent loop (prompts, tool calls with ok, error and missing results, aborts,
// interruptions, labels, navigation, model changes). The same seed always
// gives the same log.
//
// # Concurrency
//
// A Generator belongs to one goroutine.
package synth

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Msg is one message for the sessions stream.
type Msg struct {
	Subject string
	Data    []byte
}

// Generator produces entries one at a time.
type Generator struct {
	rng      *rand.Rand
	names    events.Names
	now      time.Time
	sessions []*session
	next     int
}

type session struct {
	id      string
	n       int      // entries so far
	leaf    *string  // current leaf
	ids     []string // tree entry ids so far
	pending []string // tool calls without results
	phase   int      // 0 idle, 1 waiting for the model, 2 tool results due
	calls   int
}

// New returns a generator over sessions sessions named s0000, s0001...
func New(seed uint64, sessions int) *Generator {
	g := &Generator{
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	}
	for i := range sessions {
		g.sessions = append(g.sessions, &session{id: fmt.Sprintf("s%04d", i)})
	}
	return g
}

// Log returns n messages of a generator with this seed and session count.
func Log(seed uint64, sessions, n int) []Msg {
	g := New(seed, sessions)
	out := make([]Msg, n)
	for i := range out {
		out[i] = g.Next()
	}
	return out
}

// Next returns the next entry of a randomly chosen session.
func (g *Generator) Next() Msg {
	g.now = g.now.Add(time.Duration(1+g.rng.IntN(3000)) * time.Millisecond)
	s := g.sessions[g.rng.IntN(len(g.sessions))]
	e := g.entry(s)
	data, err := e.MarshalJSON()
	if err != nil {
		panic(fmt.Sprintf("synth: marshal: %v", err)) // the generator's own bug
	}
	return Msg{Subject: g.names.SessionSubject(events.DefaultRef(s.id)), Data: data}
}

func (g *Generator) entry(s *session) events.Entry {
	ts := events.FormatTime(g.now)
	s.n++
	if s.n == 1 {
		return events.Entry{Type: events.EntrySession, Version: events.PiVersion, ID: s.id, Timestamp: ts,
			Cwd: "/work/" + s.id, Model: "scripted/a", ThinkingLevel: "off"}
	}
	g.next++
	e := events.Entry{ID: fmt.Sprintf("%s-%d", s.id, s.n), ParentID: s.leaf, Timestamp: ts}
	defer func() {
		s.ids = append(s.ids, e.ID)
		if e.Type == events.EntryLeaf {
			s.leaf = e.TargetID
		} else {
			id := e.ID
			s.leaf = &id
		}
	}()
	ms := g.now.UnixMilli()
	switch {
	case s.phase == 2 && len(s.pending) > 0:
		id := s.pending[0]
		if g.rng.IntN(20) == 0 { // the turn dies before this result
			e.Type, e.Reason = events.EntryTurnInterrupted, "crash"
			s.pending, s.phase = nil, 0
			return e
		}
		s.pending = s.pending[1:]
		if len(s.pending) == 0 {
			s.phase = 1
		}
		e.Type = events.EntryMessage
		e.Message = &events.Message{Role: events.RoleToolResult, ToolCallID: id, ToolName: toolOf(id),
			Content: events.TextContent("output of " + id), IsError: g.rng.IntN(5) == 0, Timestamp: ms}
		return e
	case s.phase == 1:
		e.Type = events.EntryMessage
		m := &events.Message{Role: events.RoleAssistant, Provider: "scripted", Model: "a", Timestamp: ms,
			Usage: &events.Usage{Input: int64(100 + g.rng.IntN(900)), Output: int64(10 + g.rng.IntN(90))}}
		m.Usage.TotalTokens = m.Usage.Input + m.Usage.Output
		m.Usage.Cost.Total = float64(m.Usage.TotalTokens) / 1e6
		e.Message = m
		switch r := g.rng.IntN(10); {
		case r < 5:
			m.StopReason = events.StopToolUse
			for i := range 1 + g.rng.IntN(3) {
				s.calls++
				id := fmt.Sprintf("%s-c%d-%s", s.id, s.calls, tools[(s.calls+i)%len(tools)])
				args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("f%d", g.rng.IntN(50))})
				m.Content.Blocks = append(m.Content.Blocks, events.Block{Type: events.BlockToolCall, ID: id,
					Name: toolOf(id), Arguments: args})
				s.pending = append(s.pending, id)
			}
			s.phase = 2
		case r == 5:
			m.StopReason = events.StopAborted
			m.Content = events.TextContent("aborted")
			s.phase = 0
		case r == 6:
			m.StopReason, m.ErrorMessage = events.StopError, "overloaded"
			m.Content = events.TextContent("")
			s.phase = 0
		default:
			m.StopReason = events.StopEnd
			m.Content = events.TextContent("done")
			s.phase = 0
		}
		return e
	}
	// Idle: a prompt, or now and then a label, a navigation or a model change.
	switch r := g.rng.IntN(12); {
	case r == 0 && len(s.ids) > 0:
		t := s.ids[g.rng.IntN(len(s.ids))]
		e.Type, e.TargetID, e.Label = events.EntryLabel, &t, fmt.Sprintf("l%d", g.rng.IntN(5))
	case r == 1 && len(s.ids) > 0:
		t := s.ids[g.rng.IntN(len(s.ids))]
		e.Type, e.TargetID = events.EntryLeaf, &t
	case r == 2:
		e.Type, e.Provider, e.ModelID = events.EntryModelChange, "scripted", fmt.Sprintf("m%d", g.rng.IntN(3))
	default:
		e.Type = events.EntryMessage
		e.Message = &events.Message{Role: events.RoleUser, Content: events.TextContent("do it"),
			CommandID: fmt.Sprintf("cmd-%d", g.next), Timestamp: ms}
		s.phase = 1
	}
	return e
}

var tools = []string{"read", "ls", "bash", "grep"}

func toolOf(id string) string {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '-' {
			return id[i+1:]
		}
	}
	return id
}
