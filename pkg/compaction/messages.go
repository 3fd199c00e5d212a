package compaction

import (
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
)

// The context a compaction cuts is the one the model is sent: package
// sessiontree builds it, entry by entry ([sessiontree.Part]), and these
// say what a part is to a cut.

// isMessage reports whether the entry of p contributes a message.
func isMessage(p *sessiontree.Part) bool { return len(p.Messages) > 0 }

// cutAllowed reports whether a compaction may keep history from p's entry
// on: one that contributes a message, but not tool results (which stay
// with their call: a tool result entry, or a turn_interrupted's).
func cutAllowed(p *sessiontree.Part) bool {
	return isMessage(p) && p.Messages[0].Role != events.RoleToolResult
}

// startsTurn reports whether p's entry begins a turn: a user message (or a
// shell command the user ran).
func startsTurn(p *sessiontree.Part) bool {
	if !isMessage(p) {
		return false
	}
	r := p.Messages[0].Role
	return r == events.RoleUser || r == events.RoleBashExecution
}

// estimate is the estimated tokens of p's messages.
func estimate(p *sessiontree.Part) int64 {
	var n int64
	for i := range p.Messages {
		n += EstimateMessage(&p.Messages[i])
	}
	return n
}
