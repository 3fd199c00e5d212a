package compaction_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// keep1k keeps about 1000 tokens (4000 characters).
var keep1k = compaction.Settings{ReserveTokens: 1000, KeepRecentTokens: 1000}

func TestCutAtATurnStart(t *testing.T) {
	var b builder
	for i := 0; i < 4; i++ {
		b.user(chars("question", 2000))
		b.reply(chars("answer", 2000), nil)
	}
	p, err := compaction.Prepare(b.path, keep1k)
	golden(t, "cut_turn_start", render(p, err))
}

func TestCutNeverAtAToolResult(t *testing.T) {
	var b builder
	b.user(chars("old question", 4000))
	b.reply("old answer", nil)
	b.user("read it")
	b.call("c1", "read", `{"path":"a.go"}`)
	b.result("c1", "read", chars("file a", 4400)) // the budget is reached inside this result
	b.reply("done", nil)
	p, err := compaction.Prepare(b.path, keep1k)
	if err == nil {
		for _, e := range b.path {
			if e.ID == p.FirstKeptEntryID && e.Message.Role == events.RoleToolResult {
				t.Fatalf("cut at tool result %s", e.ID)
			}
		}
	}
	golden(t, "cut_not_at_tool_result", render(p, err))
}

func TestSplitTurnSummarisesItsPrefixSeparately(t *testing.T) {
	var b builder
	b.user(chars("earlier", 800))
	b.reply("earlier answer", nil)
	b.user("refactor everything") // one huge turn from here
	for i := 0; i < 6; i++ {
		id := string(rune('a' + i))
		b.call(id, "edit", `{"path":"f`+id+`.go"}`)
		b.result(id, "edit", chars("edited", 1200))
	}
	b.reply("all done", nil)
	p, err := compaction.Prepare(b.path, keep1k)
	if !p.SplitTurn() {
		t.Fatalf("want a split turn: %s", render(p, err))
	}
	golden(t, "split_turn", render(p, err))
}

func TestWithinBudgetIsNothingToCompact(t *testing.T) {
	var b builder
	b.user("hi")
	b.reply("hello", &events.Usage{Input: 10, Output: 2})
	p, err := compaction.Prepare(b.path, keep1k)
	if !errors.Is(err, compaction.ErrNothingToCompact) {
		t.Fatalf("err = %v", err)
	}
	golden(t, "nothing_to_compact", render(p, err))
}

func TestSettingsChangesBeforeTheCutAreKept(t *testing.T) {
	var b builder
	b.user(chars("first", 4000))
	b.reply("ok", nil)
	b.add(events.Entry{Type: events.EntryModelChange, Provider: "scripted", ModelID: "m2"})
	b.add(events.Entry{Type: events.EntryLabel, Label: "here"})
	b.user(chars("second", 4000))
	b.reply("ok", nil)
	p, err := compaction.Prepare(b.path, keep1k)
	golden(t, "non_message_entries_kept", render(p, err))
}

// repeated builds a path with a compaction that kept e5.. and later talk.
func repeated(later int) *builder {
	var b builder
	b.user(chars("one", 4000))
	b.call("r1", "read", `{"path":"old.go"}`)
	b.result("r1", "read", "package old")
	b.reply("ok", nil)
	kept := b.user(chars("two", 2000))
	b.reply(chars("two done", 2000), nil)
	b.add(events.Entry{Type: events.EntryCompaction, Summary: "## Goal\nold work", FirstKeptEntryID: kept, TokensBefore: 3000,
		Details: []byte(`{"readFiles":["old.go","pi-read.go"],"modifiedFiles":["pi-edited.go"]}`)})
	for i := 0; i < later; i++ {
		b.user(chars("later", 2000))
		b.call("w"+string(rune('0'+i)), "write", `{"path":"new`+string(rune('0'+i))+`.go"}`)
		b.result("w"+string(rune('0'+i)), "write", "written")
		b.reply(chars("later done", 2000), &events.Usage{Input: int64(2000 + 1000*i), Output: 500})
	}
	return &b
}

func TestRepeatedCompactionSummarisesWhatThePreviousOneKept(t *testing.T) {
	b := repeated(3)
	p, err := compaction.Prepare(b.path, keep1k)
	if err != nil || p.PreviousSummary == "" || !strings.HasPrefix(p.Summarize[0].Content.Text(), "two") {
		t.Fatalf("want the kept messages first in the summary: %s", render(p, err))
	}
	golden(t, "repeated", render(p, err))
}

func TestRepeatedCompactionWithNothingNew(t *testing.T) {
	b := repeated(0)
	p, err := compaction.Prepare(b.path, compaction.Settings{ReserveTokens: 1000, KeepRecentTokens: 5000})
	if !errors.Is(err, compaction.ErrNothingToCompact) {
		t.Fatalf("err = %v", err)
	}
	golden(t, "repeated_nothing_new", render(p, err))
}

func TestFileOperationsAccumulate(t *testing.T) {
	b := repeated(3)
	p, err := compaction.Prepare(b.path, keep1k)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Result(compaction.Summary{Text: "## Goal\nnew work", Usage: events.Usage{Input: 700, Output: 90}})
	golden(t, "file_ops", "summary:\n"+r.Summary+"\n\ndetails: "+string(r.Details)+"\nfirstKept: "+r.FirstKeptEntryID+"\n")
}

func TestSerializeTruncatesToolResults(t *testing.T) {
	var b builder
	b.user("look at the log")
	b.msg(events.Message{Role: events.RoleAssistant, Content: events.Content{Blocks: []events.Block{
		{Type: events.BlockThinking, Thinking: "the log is long"}, events.TextBlock("reading"),
		{Type: events.BlockToolCall, ID: "c", Name: "bash", Arguments: []byte(`{"command":"cat log"}`)}}}})
	b.msg(events.Message{Role: events.RoleToolResult, ToolCallID: "c", ToolName: "bash", IsError: true,
		Content: events.TextContent(strings.Repeat("0123456789", 300))})
	b.add(events.Entry{Type: events.EntryCustomMessage, CustomType: "note", Content: events.TextContent("from a hook")})
	b.add(events.Entry{Type: events.EntryBranchSummary, Summary: "tried X"})
	var msgs []events.Message
	for _, e := range b.path {
		if e.Message != nil {
			msgs = append(msgs, *e.Message)
		}
	}
	msgs = append(msgs, events.Message{Role: events.RoleCustom, CustomType: "note", Content: events.TextContent("from a hook")},
		events.Message{Role: events.RoleBranchSummary, Summary: "tried X"})
	golden(t, "serialize", compaction.Serialize(msgs))
}

func TestPromptsGolden(t *testing.T) {
	got := compaction.HistoryPrompt("[User]: hi", "", "") + "\n=====\n" +
		compaction.HistoryPrompt("[User]: hi", "## Goal\nold", "focus on the tests") + "\n=====\n" +
		compaction.TurnPrefixPrompt("[User]: big") + "\n=====\n" +
		compaction.BranchPrompt("[User]: try B", "")
	golden(t, "prompts", got)
}

func TestAbandonedBranch(t *testing.T) {
	var b builder
	b.user("root")
	b.reply("a", nil)
	b.user("left")
	b.reply("b", nil)
	target := b.path[:2]
	if got := compaction.AbandonedBranch(b.path, target); len(got) != 2 || got[0].ID != "e3" {
		t.Fatalf("abandoned = %v", got)
	}
	if got := compaction.AbandonedBranch(b.path, nil); len(got) != 4 {
		t.Fatalf("to before the first entry: %d", len(got))
	}
	if got := compaction.AbandonedBranch(b.path[:2], b.path); len(got) != 0 {
		t.Fatalf("forward on the same path: %d", len(got))
	}
	if _, err := compaction.BranchJob(nil, "", keep1k, 0); !errors.Is(err, compaction.ErrNothingToCompact) {
		t.Fatalf("empty branch: %v", err)
	}
}

func TestCutInsideWhatThePreviousCompactionKept(t *testing.T) {
	b := repeated(0)
	p, err := compaction.Prepare(b.path, compaction.Settings{ReserveTokens: 1000, KeepRecentTokens: 400})
	if err != nil {
		t.Fatal(err)
	}
	// The new compaction keeps from inside the old one's kept part; the
	// reducer then starts there and skips the old compaction entry.
	r := p.Result(compaction.Summary{Text: "new"})
	b.add(events.Entry{ID: "c2", Type: events.EntryCompaction, Summary: r.Summary, FirstKeptEntryID: r.FirstKeptEntryID})
	c, err2 := sessiontree.BuildContext(nil, b.path)
	if err2 != nil {
		t.Fatal(err2)
	}
	msgs := c.Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	golden(t, "cut_in_previous_kept", render(p, err)+"context after: "+strings.Join(roles, " ")+"\n")
}

// interrupted builds: a big question, a call of two tools of which one got
// its result (of result characters), a turn_interrupted that closes the
// other, an empty branch summary, a shell command kept out of the context
// (pi's !!), then a question of recent characters and its reply.
func interrupted(result, recent int) *builder {
	var b builder
	b.user(chars("question", 4000))
	b.msg(events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse, Content: events.Content{Blocks: []events.Block{
		{Type: events.BlockToolCall, ID: "t1", Name: "read", Arguments: []byte(`{"path":"a.go"}`)},
		{Type: events.BlockToolCall, ID: "t2", Name: "bash", Arguments: []byte(`{"command":"make"}`)}}}})
	b.result("t1", "read", chars("file a", result))
	b.add(events.Entry{ID: "ti", Type: events.EntryTurnInterrupted, Reason: "crash"})
	b.add(events.Entry{ID: "bs", Type: events.EntryBranchSummary, FromID: "x"})
	b.msg(events.Message{Role: events.RoleBashExecution, Command: "cat secret", Output: "s3cr3t", ExcludeFromContext: true})
	b.user(chars("recent", recent))
	b.reply("done", nil)
	return &b
}

func TestCompactionCutsTheContextTheModelIsSent(t *testing.T) {
	// The budget is reached inside the tool result: the cut moves forward
	// past the results (t1's entry, and t2's that the turn_interrupted
	// makes up) and the empty branch summary, which is no message, to the
	// shell command, then back to keep that branch summary with it, never
	// to the turn_interrupted. The interrupted call is summarised with its
	// result.
	b := interrupted(4400, 10)
	p, err := compaction.Prepare(b.path, keep1k)
	if err != nil {
		t.Fatal(err)
	}
	if p.FirstKeptEntryID != "bs" {
		t.Fatalf("first kept = %s, want bs", p.FirstKeptEntryID)
	}
	last := p.Summarize[len(p.Summarize)-1]
	if len(p.Summarize) != 4 || last.Role != events.RoleToolResult || last.ToolCallID != "t2" || !last.IsError {
		t.Fatalf("summarised: %s", render(p, err))
	}
}

func TestTheSummariserSeesWhatTheModelIsSent(t *testing.T) {
	b := interrupted(10, 4400)
	p, err := compaction.Prepare(b.path, keep1k)
	if err != nil {
		t.Fatal(err)
	}
	text := compaction.Serialize(p.Summarize)
	for _, bad := range []string{"s3cr3t", "cat secret", "abandoned branch"} {
		if strings.Contains(text, bad) {
			t.Errorf("the transcript holds %q:\n%s", bad, text)
		}
	}
	if !strings.Contains(text, "[Tool result bash (error)]: The tool call was interrupted before it returned a result: crash") {
		t.Errorf("the transcript lacks the interrupted call's result:\n%s", text)
	}
}

func TestPrepareRefusesAPathTheReducerRefuses(t *testing.T) {
	var b builder
	b.add(events.Entry{Type: events.EntrySession, ID: "s"})
	b.user(chars("question", 8000))
	b.user("recent")
	_, err := compaction.Prepare(b.path, keep1k)
	if !errors.Is(err, sessiontree.ErrInvalidPath) || !strings.Contains(err.Error(), `path entry 0 ("s"): is a session header`) {
		t.Fatalf("a header in the path: %v", err)
	}
}
