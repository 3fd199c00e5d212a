package harness

import (
	"context"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Session is where a harness records its session and reads it back. The
// session log of package session and the in-memory agenttest.Session both
// implement it.
type Session interface {
	// Append appends e after the active leaf and returns it as stored. The
	// session fills ID (when empty), ParentID and Timestamp. An entry whose
	// ID is already in the session is not appended again (retried appends
	// are no-ops). A `leaf` entry moves the active leaf to its TargetID.
	Append(ctx context.Context, e events.Entry) (events.Entry, error)
	// Path returns the entries from the root to the active leaf.
	Path(ctx context.Context) ([]events.Entry, error)
	// Entry returns the entry with the given id, on any branch; ok is
	// false when the session has none (navigation looks its target up).
	Entry(ctx context.Context, id string) (e events.Entry, ok bool, err error)
}

// State is what a path of entries means to the harness.
type State struct {
	Messages      []events.Message
	SystemPrompt  string   // of the session header, "" if none
	Model         string   // provider/model of the last model_change (or the header), "" if none
	ThinkingLevel string   // of the last thinking_level_change, "" if none
	ActiveTools   []string // of the last active_tools_change
	HasTools      bool     // an active_tools_change is on the path
	LeafID        string   // ID of the last entry, "" for an empty path
}

// Reduce builds the state of a path (a `session` header, if the path
// starts with one, gives the initial model, thinking level, tools and
// system prompt). With a compaction on the path the
// messages are its summary, then the messages from its FirstKeptEntryID up
// to it, then those after it. Entry types it does not know are skipped.
func Reduce(path []events.Entry) State {
	var s State
	last := -1
	for i := range path {
		e := &path[i]
		switch e.Type {
		case events.EntrySession:
			s.SystemPrompt, s.Model, s.ThinkingLevel = e.SystemPrompt, e.Model, e.ThinkingLevel
			if e.Tools != nil {
				s.ActiveTools, s.HasTools = e.Tools, true
			}
		case events.EntryModelChange:
			s.Model = e.Provider + "/" + e.ModelID
		case events.EntryThinkingLevelChange:
			s.ThinkingLevel = e.ThinkingLevel
		case events.EntryActiveToolsChange:
			s.ActiveTools, s.HasTools = e.ActiveToolNames, true
		case events.EntryCompaction:
			last = i
		}
	}
	if len(path) > 0 {
		s.LeafID = path[len(path)-1].ID
	}
	start := 0
	if last >= 0 {
		c := &path[last]
		s.Messages = append(s.Messages, events.Message{Role: events.RoleCompactionSummary, Summary: c.Summary, TokensBefore: c.TokensBefore})
		start = last + 1
		for i := 0; i < last; i++ {
			if path[i].ID == c.FirstKeptEntryID {
				for j := i; j < last; j++ {
					s.Messages = appendMessage(s.Messages, &path[j])
				}
				break
			}
		}
	}
	for i := start; i < len(path); i++ {
		s.Messages = appendMessage(s.Messages, &path[i])
	}
	return s
}

func appendMessage(msgs []events.Message, e *events.Entry) []events.Message {
	switch e.Type {
	case events.EntryMessage:
		if e.Message != nil {
			return append(msgs, *e.Message)
		}
	case events.EntryCustomMessage:
		return append(msgs, events.Message{Role: events.RoleCustom, CustomType: e.CustomType, Content: e.Content, Display: e.Display, Details: e.Details})
	case events.EntryBranchSummary:
		return append(msgs, events.Message{Role: events.RoleBranchSummary, Summary: e.Summary, FromID: e.FromID})
	}
	return msgs
}
