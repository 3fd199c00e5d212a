package store

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Every tree node carries the preview its entry type calls for
// (docs/read-models.md, "Tree"): first lines cut to PreviewRunes, tool
// names, labels.
func TestTreeNodesCarryPreviews(t *testing.T) {
	long := strings.Repeat("é", PreviewRunes+5)
	id := func(s string) *string { return &s }
	img := events.Block{Type: events.BlockImage, Data: "AA==", MimeType: "image/png"}
	call := func(id, name string) events.Block {
		return events.Block{Type: events.BlockToolCall, ID: id, Name: name, Arguments: []byte(`{}`)}
	}
	cases := []struct {
		e       events.Entry
		preview string
		tools   []string
	}{
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("\n\n  list files  \nand more")}},
			"list files…", nil},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent(long)}},
			long[:len("é")*PreviewRunes] + "…", nil},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent(long[:len("é")*PreviewRunes])}},
			long[:len("é")*PreviewRunes], nil},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{img, img}}}},
			"[2 image(s)]", nil},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("tab\there\x07bell")}},
			"tab here bell", nil},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse,
			Content: events.Content{Blocks: []events.Block{{Type: events.BlockThinking, Thinking: "hmm"}, events.TextBlock("Looking."), call("c1", "ls"), call("c2", "read")}}}},
			"Looking.", []string{"ls", "read"}},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopError, ErrorMessage: "overloaded_error\ndetails"}},
			"overloaded_error…", nil},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleToolResult, ToolCallID: "c1", ToolName: "ls", Content: events.TextContent("a.txt\nb.txt")}},
			"a.txt…", []string{"ls"}},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleBashExecution, Command: "make test"}},
			"$ make test", nil},
		{events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleCompactionSummary, Summary: "We did things."}},
			"We did things.", nil},
		{events.Entry{Type: events.EntryCompaction, Summary: "Summary\nof it", FirstKeptEntryID: "x"}, "Summary…", nil},
		{events.Entry{Type: events.EntryBranchSummary, Summary: "Tried a branch", FromID: "x"}, "Tried a branch", nil},
		{events.Entry{Type: events.EntryModelChange, Provider: "openai", ModelID: "gpt-x"}, "openai/gpt-x", nil},
		{events.Entry{Type: events.EntryThinkingLevelChange, ThinkingLevel: "high"}, "high", nil},
		{events.Entry{Type: events.EntryActiveToolsChange, ActiveToolNames: []string{"read", "ls"}}, "", []string{"read", "ls"}},
		{events.Entry{Type: events.EntryLabel, TargetID: id("p"), Label: "checkpoint"}, "checkpoint", nil},
		{events.Entry{Type: events.EntryLabel, TargetID: id("p")}, "", nil},
		{events.Entry{Type: events.EntryLeaf, TargetID: id("p")}, "→ p", nil},
		{events.Entry{Type: events.EntryLeaf}, "→ (before the first entry)", nil},
		{events.Entry{Type: events.EntrySessionInfo, Name: "my session"}, "my session", nil},
		{events.Entry{Type: events.EntryCustom, CustomType: "ext.state", Data: []byte(`{}`)}, "ext.state", nil},
		{events.Entry{Type: events.EntryCustomMessage, CustomType: "ext.note", Content: events.TextContent("Note: hi")}, "Note: hi", nil},
		{events.Entry{Type: events.EntryTurnInterrupted, Reason: "orchestrator restarted"}, "orchestrator restarted", nil},
		{events.Entry{Type: events.EntryCommandRejected, CommandID: "c9", Reason: "busy: a run is in progress", Code: "busy"}, "busy: a run is in progress", nil},
	}
	db := openMem(t, vfs.NewMem())
	defer func() {
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	}()
	w, err := db.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("close w: %v", err)
		}
	}()
	const ts = "2026-11-01T10:00:00.000Z"
	apply := func(seq uint64, e events.Entry) {
		e.Timestamp = ts
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Apply(seq, "cairn.session.default.s1", b); err != nil {
			t.Fatal(err)
		}
	}
	apply(1, events.Entry{Type: events.EntrySession, Version: 3, ID: "s1", Model: "scripted/a"})
	for i, c := range cases {
		e := c.e
		e.ID = "n" + string(rune('a'+i))
		apply(uint64(i+2), e)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	tree, err := db.Tree(events.DefaultRef("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Nodes) != len(cases) {
		t.Fatalf("%d nodes, want %d", len(tree.Nodes), len(cases))
	}
	for i, c := range cases {
		n := tree.Nodes[i]
		if n.Preview != c.preview || !reflect.DeepEqual(n.Tools, c.tools) {
			t.Errorf("%s %s: preview %q tools %q, want %q %q", c.e.Type, n.Role, n.Preview, n.Tools, c.preview, c.tools)
		}
		if r := []rune(strings.TrimSuffix(n.Preview, "…")); len(r) > PreviewRunes {
			t.Errorf("%s: preview of %d runes, more than %d", c.e.Type, len(r), PreviewRunes)
		}
	}
}
