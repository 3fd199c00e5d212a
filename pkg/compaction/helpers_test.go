package compaction_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}

// builder makes a path of entries with ids e1, e2, ...
type builder struct{ path []events.Entry }

func (b *builder) add(e events.Entry) string {
	if e.ID == "" {
		e.ID = fmt.Sprintf("e%d", len(b.path)+1)
	}
	if e.Timestamp == "" {
		e.Timestamp = "2026-03-01T10:00:00.000Z"
	}
	if n := len(b.path); n > 0 {
		p := b.path[n-1].ID
		e.ParentID = &p
	}
	b.path = append(b.path, e)
	return e.ID
}

func (b *builder) msg(m events.Message) string {
	return b.add(events.Entry{Type: events.EntryMessage, Message: &m})
}

// chars returns a text of n characters (n/4 tokens).
func chars(label string, n int) string {
	return label + strings.Repeat(".", max(n-len(label), 0))
}

func (b *builder) user(text string) string {
	return b.msg(events.Message{Role: events.RoleUser, Content: events.TextContent(text)})
}

func (b *builder) reply(text string, u *events.Usage) string {
	return b.msg(events.Message{Role: events.RoleAssistant, Content: events.TextContent(text), StopReason: events.StopEnd, Usage: u})
}

func (b *builder) call(id, name, args string) string {
	return b.msg(events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse,
		Content: events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: id, Name: name, Arguments: []byte(args)}}}})
}

func (b *builder) result(id, name, text string) string {
	return b.msg(events.Message{Role: events.RoleToolResult, ToolCallID: id, ToolName: name, Content: events.TextContent(text)})
}

// render describes a preparation (or its error) for a golden file.
func render(p compaction.Preparation, err error) string {
	var sb strings.Builder
	if err != nil {
		fmt.Fprintf(&sb, "error: %v\n", err)
	}
	fmt.Fprintf(&sb, "firstKept: %s\ntokensBefore: %d\nsplitTurn: %v\n", p.FirstKeptEntryID, p.TokensBefore, p.SplitTurn())
	if p.PreviousSummary != "" {
		fmt.Fprintf(&sb, "previousSummary: %q\n", p.PreviousSummary)
	}
	list := func(name string, msgs []events.Message) {
		fmt.Fprintf(&sb, "%s (%d):\n", name, len(msgs))
		for _, m := range msgs {
			text := m.Content.Text()
			if m.Summary != "" {
				text = m.Summary
			}
			for _, c := range m.ToolCalls() {
				text += c.Name + string(c.Arguments)
			}
			if len(text) > 24 {
				text = text[:24] + "…"
			}
			fmt.Fprintf(&sb, "  %s: %s\n", m.Role, text)
		}
	}
	list("summarize", p.Summarize)
	list("turnPrefix", p.TurnPrefix)
	if p.Files.Read != nil {
		fmt.Fprintf(&sb, "readOnly: %v\nmodified: %v\n", p.Files.ReadOnly(), p.Files.Modified())
	}
	return sb.String()
}
