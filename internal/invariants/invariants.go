// Package invariants checks, from a session's log alone, what every run of
// the platform must keep however it was disturbed (processes killed,
// paused, cut off): the checks the cluster test and the compose smoke test
// share.
//
// # Guarantees
//
// Check reports, one line each: a session that has not settled (neither
// idle nor waiting), an acknowledged command not named by exactly one entry
// (lost, or applied twice), a tool call without exactly one result (a call
// run twice leaves two), a result naming no earlier call, and every break
// of the hash chain (session.VerifyChain) over the stored bytes. It reads
// nothing but the records given.
//
// # Concurrency
//
// The functions are pure and safe for concurrent use.
package invariants

import (
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// Idle reports whether the session is settled: the last entry that decides
// it is a settled assistant message or a turn_interrupted entry (the rule of
// the projector's status, docs/read-models.md).
func Idle(recs []session.Record) bool {
	for i := len(recs) - 1; i >= 0; i-- {
		e := recs[i].Entry
		if e.Type == events.EntryTurnInterrupted {
			return true
		}
		if e.Type != events.EntryMessage || e.Message == nil {
			continue
		}
		switch e.Message.Role {
		case events.RoleUser, events.RoleToolResult:
			return false
		case events.RoleAssistant:
			return e.Message.StopReason != events.StopToolUse
		}
	}
	return true
}

// Names counts the entries naming each command id.
func Names(recs []session.Record) map[string]int {
	n := map[string]int{}
	for _, r := range recs {
		if r.Entry.CommandID != "" {
			n[r.Entry.CommandID]++
		}
	}
	return n
}

// Stats is what one session's log shows.
type Stats struct {
	ToolCalls, Answered, Interrupted, Compactions int
	// Lost is the acknowledged commands no entry names; Twice those named
	// by more than one; WithoutOneResult the tool calls with no result or
	// several.
	Lost, Twice, WithoutOneResult int
	// ChainOK is false when the hash chain is broken (Data must be set).
	ChainOK bool
}

// Check returns what one session's log shows and every problem in it, as
// the package doc lists. acked are the command ids the platform
// acknowledged for the session. The chain is checked when the records
// carry their stored bytes (Data).
func Check(sid string, recs []session.Record, acked []string) (Stats, []string) {
	st := Stats{ChainOK: true}
	var problems []string
	if !Idle(recs) {
		problems = append(problems, fmt.Sprintf("%s: has not settled", sid))
	}
	calls := map[string]int{}     // entry id/call id → results
	latest := map[string]string{} // call id → its latest call
	var order []string
	for _, r := range recs {
		e := r.Entry
		if e.Type == events.EntryTurnInterrupted {
			st.Interrupted++
		}
		if e.Type == events.EntryCompaction {
			st.Compactions++
		}
		if e.Type != events.EntryMessage || e.Message == nil {
			continue
		}
		m := e.Message
		switch m.Role {
		case events.RoleAssistant:
			for _, b := range m.Content.Blocks {
				if b.Type == events.BlockToolCall {
					// A model may reuse a call id in a session (the scripted
					// provider numbers its calls per process, so the owner
					// after a failover repeats its predecessor's ids): a
					// result answers the latest call of that id.
					key := e.ID + "/" + b.ID
					latest[b.ID] = key
					if _, seen := calls[key]; !seen {
						order = append(order, key)
						calls[key] = 0
					}
				}
			}
			if m.StopReason == events.StopEnd {
				st.Answered++
			}
		case events.RoleToolResult:
			key, ok := latest[m.ToolCallID]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: a result names tool call %s, which no earlier assistant message made", sid, m.ToolCallID))
				continue
			}
			calls[key]++
		}
	}
	st.ToolCalls = len(order)
	for _, id := range order {
		if n := calls[id]; n != 1 {
			st.WithoutOneResult++
			problems = append(problems, fmt.Sprintf("%s: tool call %s has %d results, want 1", sid, id, n))
		}
	}
	named := Names(recs)
	for _, id := range acked {
		switch n := named[id]; {
		case n == 0:
			st.Lost++
		case n > 1:
			st.Twice++
		}
		if named[id] != 1 {
			problems = append(problems, fmt.Sprintf("%s: acknowledged command %s is named by %d entries, want 1", sid, id, named[id]))
		}
	}
	if len(recs) > 0 && recs[0].Data != nil {
		for _, p := range session.VerifyChain(recs) {
			st.ChainOK = false
			problems = append(problems, fmt.Sprintf("%s: hash chain: %v", sid, p))
		}
	}
	return st, problems
}
