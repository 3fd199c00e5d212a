package compaction

import "github.com/cairn-agents/cairn/pkg/events"

// entryMessage is the message an entry contributes to the context, as the
// harness's reducer builds it; false for entries that contribute none.
func entryMessage(e *events.Entry) (events.Message, bool) {
	switch e.Type {
	case events.EntryMessage:
		if e.Message != nil {
			return *e.Message, true
		}
	case events.EntryCustomMessage:
		return events.Message{Role: events.RoleCustom, CustomType: e.CustomType, Content: e.Content, Display: e.Display}, true
	case events.EntryBranchSummary:
		return events.Message{Role: events.RoleBranchSummary, Summary: e.Summary, FromID: e.FromID}, true
	}
	return events.Message{}, false
}

// cutAllowed reports whether a compaction may keep history from e on: any
// message entry but a tool result (which stays with its call).
func cutAllowed(e *events.Entry) bool {
	m, ok := entryMessage(e)
	return ok && m.Role != events.RoleToolResult
}

// startsTurn reports whether e begins a turn: a user message (or a shell
// command the user ran).
func startsTurn(e *events.Entry) bool {
	m, ok := entryMessage(e)
	return ok && (m.Role == events.RoleUser || m.Role == events.RoleBashExecution)
}

func isMessage(e *events.Entry) bool {
	_, ok := entryMessage(e)
	return ok
}
