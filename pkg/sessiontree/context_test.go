package sessiontree

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// chain links entries into a path: each one's parent is the one before.
func chain(entries ...events.Entry) []events.Entry {
	for i := range entries {
		entries[i].ParentID = nil
		if i > 0 {
			entries[i].ParentID = ptr(entries[i-1].ID)
		}
		if entries[i].Timestamp == "" {
			entries[i].Timestamp = "2026-03-01T10:00:00.000Z"
		}
	}
	return entries
}

func userEntry(id, text string) events.Entry {
	return events.Entry{Type: events.EntryMessage, ID: id,
		Message: &events.Message{Role: events.RoleUser, Content: events.TextContent(text)}}
}

func TestBuildContextRejectsBadPaths(t *testing.T) {
	hdr := &events.Entry{Type: events.EntrySession, ID: "s1"}
	good := chain(userEntry("a", "1"), userEntry("b", "2"))
	cases := []struct {
		name   string
		header *events.Entry
		path   []events.Entry
		want   string
	}{
		{"header of the wrong type", &events.Entry{Type: events.EntryMessage, ID: "m"}, good,
			`context: header "m": has type "message", want "session"`},
		{"path does not start at a root", hdr, good[1:],
			`context: path entry 0 ("b"): has parentId "a"; a path starts at a root`},
		{"broken chain", hdr, []events.Entry{good[0], chain(userEntry("x", "0"), userEntry("c", "3"))[1]},
			`context: path entry 1 ("c"): has parentId "x", want "a"`},
		{"second root on the path", hdr, []events.Entry{good[0], chain(userEntry("c", "3"))[0]},
			`context: path entry 1 ("c"): has parentId null, want "a"`},
		{"header inside the path", hdr, []events.Entry{*hdr},
			`context: path entry 0 ("s1"): is a session header`},
		{"message entry without a message", hdr, chain(events.Entry{Type: events.EntryMessage, ID: "m"}),
			`context: path entry 0 ("m"): is a message entry without a message`},
		{"bad timestamp on a compaction", hdr, chain(userEntry("a", "1"),
			events.Entry{Type: events.EntryCompaction, ID: "c", FirstKeptEntryID: "a", Timestamp: "yesterday"}),
			`context: path entry 1 ("c"): timestamp "yesterday" is not an RFC 3339 time`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := BuildContext(c.header, c.path)
			var ce *ContextError
			if !errors.Is(err, ErrInvalidPath) || !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ContextError matching ErrInvalidPath", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %q, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestBuildContextSkipsUnknownEntryTypes(t *testing.T) {
	// The decoder refuses unknown types; a newer writer's entry built in Go
	// (or decoded by a newer build) must still reduce.
	path := chain(userEntry("a", "1"), events.Entry{Type: "future_thing", ID: "f"}, userEntry("b", "2"))
	ctx, err := BuildContext(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ctx.Messages) != 2 || ctx.Messages[1].Content.Text() != "2" {
		t.Errorf("messages = %+v, want the two user messages", ctx.Messages)
	}
}

func TestBuildContextLeavesInputAlone(t *testing.T) {
	hdr := &events.Entry{Type: events.EntrySession, ID: "s1", Tools: []string{"read"}}
	path := chain(userEntry("a", "1"), events.Entry{Type: events.EntryActiveToolsChange, ID: "t", ActiveToolNames: []string{"bash"}})
	ctx, err := BuildContext(hdr, path)
	if err != nil {
		t.Fatal(err)
	}
	ctx.Tools[0] = "changed"
	if path[1].ActiveToolNames[0] != "bash" || hdr.Tools[0] != "read" {
		t.Error("changing Context.Tools changed the entries: the slice must be the caller's own")
	}
	ctx.Messages[0].Role = "changed"
	if path[0].Message.Role != events.RoleUser {
		t.Error("changing a returned message changed the entry")
	}
}

func TestBuildContextIsDeterministic(t *testing.T) {
	hdr, path := benchPath(200)
	first, err := BuildContext(hdr, path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := BuildContext(hdr, path)
	if err != nil {
		t.Fatal(err)
	}
	if render(first) != render(again) {
		t.Error("two reductions of the same path differ")
	}
	if first.CompactionID != "c" || first.FirstKeptMissing {
		t.Errorf("compaction = %q (missing %v), want c found", first.CompactionID, first.FirstKeptMissing)
	}
	if first.Model != "anthropic/claude-sonnet-4-5" || first.ThinkingLevel != "high" || !slices.Equal(first.Tools, []string{"read", "bash"}) {
		t.Errorf("settings = %q %q %v", first.Model, first.ThinkingLevel, first.Tools)
	}
	// summary + the kept half of the path (the compaction keeps from the middle).
	if want := 1 + 100 + 0; len(first.Messages) != want {
		t.Errorf("%d messages, want %d", len(first.Messages), want)
	}
}

// benchPath returns a header and an n-entry path of alternating user and
// assistant messages (the assistant ones with a tool call and its result),
// a model change and thinking change early on, and a compaction at the end
// that keeps the second half.
func benchPath(n int) (*events.Entry, []events.Entry) {
	hdr := &events.Entry{Type: events.EntrySession, ID: "s1", Model: "openai/gpt-5", Tools: []string{"read", "bash"}}
	path := make([]events.Entry, 0, n)
	path = append(path,
		events.Entry{Type: events.EntryModelChange, ID: "m", Provider: "anthropic", ModelID: "claude-sonnet-4-5"},
		events.Entry{Type: events.EntryThinkingLevelChange, ID: "k", ThinkingLevel: "high"})
	for i := len(path); i < n-1; i++ {
		id := fmt.Sprintf("e%d", i)
		var m events.Message
		switch i % 3 {
		case 0:
			m = events.Message{Role: events.RoleUser, Content: events.TextContent("please run step " + id)}
		case 1:
			m = events.Message{Role: events.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: events.StopToolUse,
				Content: events.Content{Blocks: []events.Block{events.TextBlock("running"), {Type: events.BlockToolCall, ID: "t" + id, Name: "bash", Arguments: []byte(`{"command":"make"}`)}}}}
		case 2:
			m = events.Message{Role: events.RoleToolResult, ToolCallID: fmt.Sprintf("te%d", i-1), ToolName: "bash", Content: events.TextContent("ok")}
		}
		path = append(path, events.Entry{Type: events.EntryMessage, ID: id, Message: &m})
	}
	path = append(path, events.Entry{Type: events.EntryCompaction, ID: "c", Summary: "what happened so far",
		FirstKeptEntryID: path[(n-1)/2].ID, TokensBefore: 90000, Timestamp: "2026-03-01T10:00:00.000Z"})
	return hdr, chain(path...)
}

// BenchmarkBuildContext reduces a 1,000-entry path with a compaction that
// keeps its second half.
func BenchmarkBuildContext(b *testing.B) {
	hdr, path := benchPath(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildContext(hdr, path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkActiveContext adds the tree work a load does before reducing:
// index a 1,000-entry log, walk the active path, reduce.
func BenchmarkActiveContext(b *testing.B) {
	hdr, path := benchPath(1000)
	log := append([]events.Entry{*hdr}, path...)
	b.ReportAllocs()
	for b.Loop() {
		x, err := NewIndex(log)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := BuildContext(x.Header(), x.ActivePath()); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBuildPartsCutsTheContextByEntry(t *testing.T) {
	call := events.Entry{Type: events.EntryMessage, ID: "a", Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse,
		Content: events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: "t1", Name: "bash"}, {Type: events.BlockToolCall, ID: "t2", Name: "read"}}}}}
	path := chain(
		userEntry("u1", "summarised away"),
		userEntry("u2", "kept"),
		events.Entry{Type: events.EntryModelChange, ID: "m", Provider: "openai", ModelID: "gpt-5"},
		events.Entry{Type: events.EntryCompaction, ID: "c", Summary: "before", FirstKeptEntryID: "u2"},
		call,
		events.Entry{Type: events.EntryTurnInterrupted, ID: "ti", Reason: "crash"},
		userEntry("u3", "after"),
	)
	ctx, parts, err := BuildParts(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range parts {
		var roles []string
		for _, m := range p.Messages {
			roles = append(roles, m.Role)
		}
		got = append(got, fmt.Sprintf("%s:%s", path[p.Index].ID, strings.Join(roles, "+")))
	}
	want := "c:compactionSummary u2:user m: a:assistant ti:toolResult+toolResult u3:user"
	if strings.Join(got, " ") != want {
		t.Fatalf("parts = %s\nwant    %s", strings.Join(got, " "), want)
	}
	if len(ctx.Messages) != 6 || &parts[4].Messages[0] != &ctx.Messages[3] {
		t.Fatalf("the parts' messages must be the context's own: %d messages", len(ctx.Messages))
	}
	if plain, err := BuildContext(nil, path); err != nil || render(plain) != render(ctx) {
		t.Fatalf("BuildContext differs from BuildParts: %v\n%s%s", err, render(plain), render(ctx))
	}
}

func TestMessagesOfARunOffTheRoot(t *testing.T) {
	// The part of a branch after its fork point: it does not start at a
	// root, and a compaction in it rules nothing.
	run := chain(userEntry("x", "0"),
		events.Entry{Type: events.EntryMessage, ID: "a", Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse,
			Content: events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: "t1", Name: "bash"}}}}},
		events.Entry{Type: events.EntryCompaction, ID: "c", Summary: "s", FirstKeptEntryID: "a"},
		events.Entry{Type: events.EntryBranchSummary, ID: "b", FromID: "z"},
		events.Entry{Type: events.EntryTurnInterrupted, ID: "ti", Reason: "crash"},
	)[1:]
	msgs, err := Messages(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != events.RoleAssistant || msgs[1].Role != events.RoleToolResult || msgs[1].ToolCallID != "t1" {
		t.Fatalf("messages = %+v, want the call and its made-up result", msgs)
	}
	_, err = Messages([]events.Entry{{Type: events.EntryMessage, ID: "m"}})
	if !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), `path entry 0 ("m"): is a message entry without a message`) {
		t.Fatalf("a message entry without a message: %v", err)
	}
}
