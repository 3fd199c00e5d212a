//go:build cluster

package clustertest

import (
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// idle reports whether the session is settled: the last entry that decides
// it is a settled assistant message or a turn_interrupted entry (the rule of
// the projector's status, docs/read-models.md).
func idle(recs []session.Record) bool {
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

// names counts the entries naming each command id.
func names(recs []session.Record) map[string]int {
	n := map[string]int{}
	for _, r := range recs {
		if r.Entry.CommandID != "" {
			n[r.Entry.CommandID]++
		}
	}
	return n
}

// stats is what one session's log shows.
type stats struct {
	toolCalls, answered, interrupted, compactions int
}

// checkSession returns what is wrong with a settled session's log: a tool
// call without exactly one result, an acknowledged command not named by
// exactly one entry, a session that has not settled.
func checkSession(sid string, recs []session.Record, acked []string) (stats, []string) {
	var st stats
	var problems []string
	if !idle(recs) {
		problems = append(problems, fmt.Sprintf("%s: has not settled", sid))
	}
	calls := map[string]int{}     // entry id/call id → results
	latest := map[string]string{} // call id → its latest call
	var order []string
	for _, r := range recs {
		e := r.Entry
		if e.Type == events.EntryTurnInterrupted {
			st.interrupted++
		}
		if e.Type == events.EntryCompaction {
			st.compactions++
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
				st.answered++
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
	st.toolCalls = len(order)
	for id, n := range calls {
		if n != 1 {
			problems = append(problems, fmt.Sprintf("%s: tool call %s has %d results, want 1", sid, id, n))
		}
	}
	named := names(recs)
	for _, id := range acked {
		if named[id] != 1 {
			problems = append(problems, fmt.Sprintf("%s: acknowledged command %s is named by %d entries, want 1", sid, id, named[id]))
		}
	}
	return st, problems
}
