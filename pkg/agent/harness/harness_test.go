package harness_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/tool"
)

const toolThenText = `{"rules":[
	{"match":{"lastRole":"user","contains":"go"},"reply":{"toolCalls":[{"id":"g1","name":"gate"}]}},
	{"match":{"lastRole":"user","contains":"steer"},"reply":{"text":"steered"}},
	{"match":{"lastRole":"user","contains":"follow"},"reply":{"text":"followed"}},
	{"reply":{"text":"done"}}]}`

func TestStructuralOperationsWhileBusyFailAndChangeNothing(t *testing.T) {
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{}, g)
	done := f.prompt("go")
	recv(t, g.started)
	if f.h.Phase() != harness.PhaseTurn {
		t.Fatalf("phase = %s", f.h.Phase())
	}
	before := len(f.sess.Entries())
	if err := f.h.Prompt(context.Background(), user("again")); !errors.Is(err, harness.ErrBusy) {
		t.Fatalf("Prompt: %v", err)
	}
	if err := f.h.Compact(context.Background(), ""); !errors.Is(err, harness.ErrBusy) {
		t.Fatalf("Compact: %v", err)
	}
	if _, err := f.h.Navigate(context.Background(), nil, harness.NavigateOptions{}); !errors.Is(err, harness.ErrBusy) {
		t.Fatalf("Navigate: %v", err)
	}
	if err := f.h.Continue(context.Background()); !errors.Is(err, harness.ErrBusy) {
		t.Fatalf("Continue: %v", err)
	}
	if after := len(f.sess.Entries()); after != before || f.h.Phase() != harness.PhaseTurn {
		t.Fatalf("a refused operation changed something: entries %d -> %d, phase %s", before, after, f.h.Phase())
	}
	close(g.release)
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	if f.h.Phase() != harness.PhaseIdle {
		t.Fatalf("phase after the run = %s", f.h.Phase())
	}
	if got := summary(f.sess.Entries()); got != "user:go | assistant::toolUse | toolResult:gate done | assistant:done:stop" {
		t.Fatalf("session: %s", got)
	}
}

func TestSteeringSentWhileAToolRuns(t *testing.T) {
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{}, g)
	done := f.prompt("go")
	recv(t, g.started)
	f.h.Steer(user("steer now"))
	close(g.release)
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	want := "user:go | assistant::toolUse | toolResult:gate done | user:steer now | assistant:steered:stop"
	if got := summary(f.sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
	if q := f.rec.of(events.EvQueueUpdate); len(q) != 2 || len(q[0].Queue.Steering) != 1 || len(q[1].Queue.Steering) != 0 {
		t.Fatalf("queue updates = %+v", q)
	}
}

func TestSteeringModes(t *testing.T) {
	for _, c := range []struct {
		mode harness.QueueMode
		want string
	}{
		{harness.OneAtATime, "user:go | assistant::toolUse | toolResult:gate done | user:steer 1 | assistant:steered:stop | user:steer 2 | assistant:steered:stop"},
		{harness.All, "user:go | assistant::toolUse | toolResult:gate done | user:steer 1 | user:steer 2 | assistant:steered:stop"},
	} {
		g := newGate("gate")
		f := newFixture(t, toolThenText, harness.Config{SteeringMode: c.mode}, g)
		done := f.prompt("go")
		recv(t, g.started)
		f.h.Steer(user("steer 1"))
		f.h.Steer(user("steer 2"))
		close(g.release)
		if err := wait(t, done); err != nil {
			t.Fatal(err)
		}
		if got := summary(f.sess.Entries()); got != c.want {
			t.Fatalf("mode %d:\n%s\nwant:\n%s", c.mode, got, c.want)
		}
	}
}

func TestTwoFollowUpsOneAtATime(t *testing.T) {
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{}, g)
	done := f.prompt("go")
	recv(t, g.started)
	f.h.FollowUp(user("follow 1"))
	f.h.FollowUp(user("follow 2"))
	close(g.release)
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	want := "user:go | assistant::toolUse | toolResult:gate done | assistant:done:stop | user:follow 1 | assistant:followed:stop | user:follow 2 | assistant:followed:stop"
	if got := summary(f.sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
	if n := len(f.rec.of(events.EvAgentEnd)); n != 1 {
		t.Fatalf("%d agent_end events; follow-ups belong to the same run", n)
	}
}

func TestAbortDuringATool(t *testing.T) {
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{}, g)
	f.h.NextTurn(user("next turn note"))
	done := f.prompt("go")
	recv(t, g.started)
	f.h.Steer(user("steer lost"))
	f.h.FollowUp(user("follow lost"))
	f.h.NextTurn(user("kept for later"))
	if err := f.h.SetModel(context.Background(), f.p.Model("two")); err != nil {
		t.Fatal(err)
	}
	ab := f.h.Abort()
	if len(ab.Steering) != 1 || ab.Steering[0].Content.Text() != "steer lost" || len(ab.FollowUp) != 1 || ab.FollowUp[0].Content.Text() != "follow lost" {
		t.Fatalf("abort returned %+v", ab)
	}
	if err := wait(t, done); !errors.Is(err, llm.ErrAborted) {
		t.Fatalf("Prompt: %v", err)
	}
	// the held model change is flushed at the save point after the tool
	// results, before the next (aborted) call
	want := "user:next turn note | user:go | assistant::toolUse | toolResult:context canceled | model_change:two | assistant::aborted"
	if got := summary(f.sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
	// the next-turn message queued during the run survives the abort
	if err := f.h.Prompt(context.Background(), user("hello")); err != nil {
		t.Fatal(err)
	}
	entries := f.sess.Entries()
	if got := summary(entries[len(entries)-3:]); got != "user:kept for later | user:hello | assistant:done:stop" {
		t.Fatalf("after abort: %s", got)
	}
	if f.h.Model().ID != "two" {
		t.Fatalf("held model change lost: %s", f.h.Model().ID)
	}
}

func TestErrorReplyKeepsQueuedMessages(t *testing.T) {
	g := newGate("gate")
	f := newFixture(t, `{"rules":[
		{"match":{"lastRole":"user","contains":"go"},"reply":{"toolCalls":[{"id":"g1","name":"gate"}]}},
		{"match":{"lastRole":"toolResult"},"reply":{"error":{"status":400,"message":"invalid_request_error"}}},
		{"reply":{"text":"fine"}}]}`, harness.Config{}, g)
	done := f.prompt("go")
	recv(t, g.started)
	f.h.FollowUp(user("queued follow-up"))
	close(g.release)
	if err := wait(t, done); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Fatalf("Prompt: %v", err)
	}
	if got := summary(f.sess.Entries()); !strings.HasSuffix(got, "assistant::error") {
		t.Fatalf("session: %s", got)
	}
	ab := f.h.Abort() // shows what is still queued
	if len(ab.FollowUp) != 1 || ab.FollowUp[0].Content.Text() != "queued follow-up" {
		t.Fatalf("queued follow-up lost: %+v", ab)
	}
}

func TestConfigChangeDuringAToolCallAppliesToTheNextCallOnly(t *testing.T) {
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{}, g)
	var seen []string
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		r := ev.Request
		tools := make([]string, len(r.Tools))
		for i, s := range r.Tools {
			tools[i] = s.Name
		}
		seen = append(seen, r.Model.ID+"/"+r.ThinkingLevel+"/"+r.SystemPrompt+"/"+strings.Join(tools, ","))
		return hook.RequestPatch{}, nil
	})
	extra := newTool("extra", func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("x"), nil })
	done := f.prompt("go")
	recv(t, g.started)
	ctx := context.Background()
	if err := f.h.SetModel(ctx, f.p.Model("two")); err != nil {
		t.Fatal(err)
	}
	if err := f.h.SetThinkingLevel(ctx, "high"); err != nil {
		t.Fatal(err)
	}
	if err := f.h.SetTools(ctx, []tool.Tool{g, extra}); err != nil {
		t.Fatal(err)
	}
	f.h.SetSystemPrompt("be brief")
	if err := f.h.Append(ctx, events.Entry{Type: events.EntryCustom, CustomType: "note"}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.sess.Entries()); n != 2 {
		t.Fatalf("writes during a turn were not held: %d entries", n)
	}
	close(g.release)
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	// A session that never set a thinking level is at pi's default, off.
	if strings.Join(seen, " ; ") != "one/off//gate ; two/high/be brief/gate,extra" {
		t.Fatalf("requests: %v", seen)
	}
	want := "user:go | assistant::toolUse | toolResult:gate done | model_change:two | thinking_level_change | active_tools_change | custom:note | assistant:done:stop"
	if got := summary(f.sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
}

func TestThrowingContextHookGivesAnErrorMessageAndAUsableHarness(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{})
	off := hook.On(f.h.Hooks(), func(context.Context, hook.ContextEvent) (hook.ContextResult, error) {
		return hook.ContextResult{}, errors.New("context store unreachable")
	})
	err := f.h.Prompt(context.Background(), user("one"))
	if err == nil || !strings.Contains(err.Error(), "context store unreachable") {
		t.Fatalf("Prompt: %v", err)
	}
	if f.p.Calls() != 0 {
		t.Fatal("the model was called with an unhooked context")
	}
	if he := f.rec.of(events.EvHookError); len(he) != 1 || he[0].Hook != "context" || he[0].SessionID != "s1" {
		t.Fatalf("hook errors = %+v", he)
	}
	if f.h.Phase() != harness.PhaseIdle {
		t.Fatalf("phase = %s", f.h.Phase())
	}
	off()
	if err := f.h.Prompt(context.Background(), user("two")); err != nil {
		t.Fatal(err)
	}
	want := "user:one | assistant::error | user:two | assistant:ok:stop"
	if got := summary(f.sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
}

func TestBeforeAgentStartCollectsAndChains(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{SystemPrompt: "base"})
	var system string
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeAgentStartEvent) (hook.BeforeAgentStartResult, error) {
		s := ev.SystemPrompt + " +a"
		return hook.BeforeAgentStartResult{SystemPrompt: &s, Messages: []events.Message{user("injected a")}}, nil
	})
	hook.On(f.h.Hooks(), func(context.Context, hook.BeforeAgentStartEvent) (hook.BeforeAgentStartResult, error) {
		panic("isolated")
	})
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeAgentStartEvent) (hook.BeforeAgentStartResult, error) {
		s := ev.SystemPrompt + " +b"
		return hook.BeforeAgentStartResult{SystemPrompt: &s, Messages: []events.Message{user("injected b")}}, nil
	})
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		system = ev.Request.SystemPrompt
		return hook.RequestPatch{}, nil
	})
	if err := f.h.Prompt(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	if system != "base +a +b" {
		t.Fatalf("system prompt = %q", system)
	}
	if got := summary(f.sess.Entries()); got != "user:hi | user:injected a | user:injected b | assistant:ok:stop" {
		t.Fatalf("session: %s", got)
	}
	if n := len(f.rec.of(events.EvHookError)); n != 1 {
		t.Fatalf("%d hook errors, want 1", n)
	}
}

// failWithHeldWrite prompts "go", which calls the tool gate; while it runs
// a custom "held" entry is appended, then every append fails with failure
// and the tool finishes: the run must end with failure.
func failWithHeldWrite(t *testing.T, failure error) *fixture {
	t.Helper()
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{}, g)
	done := f.prompt("go")
	recv(t, g.started)
	if err := f.h.Append(context.Background(), events.Entry{Type: events.EntryCustom, CustomType: "held"}); err != nil {
		t.Fatal(err)
	}
	f.sess.FailAppends(failure)
	close(g.release)
	if err := wait(t, done); !errors.Is(err, failure) {
		t.Fatalf("first run: %v", err)
	}
	return f
}

func TestWriteFailureStopsTheRunAndKeepsHeldWrites(t *testing.T) {
	f := failWithHeldWrite(t, errors.New("append conflict: lost ownership"))
	f.sess.FailAppends(nil)
	if err := f.h.Prompt(context.Background(), user("again")); err != nil {
		t.Fatal(err)
	}
	if got := summary(f.sess.Entries()); got != "user:go | assistant::toolUse | custom:held | toolResult:Tool call gate was interrupted before its result was recorded; it was not run again. | user:again | assistant:done:stop" {
		t.Fatalf("held write lost or out of order: %s", got)
	}
}

func TestNewRecoversStateFromTheSession(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{})
	ctx := context.Background()
	if err := f.h.Prompt(ctx, user("first")); err != nil {
		t.Fatal(err)
	}
	if err := f.h.SetModel(ctx, f.p.Model("two")); err != nil {
		t.Fatal(err)
	}
	if err := f.h.SetThinkingLevel(ctx, "low"); err != nil {
		t.Fatal(err)
	}
	keep := newTool("keep", func(context.Context, tool.Call) (tool.Result, error) { return tool.Text(""), nil })
	drop := newTool("drop", func(context.Context, tool.Call) (tool.Result, error) { return tool.Text(""), nil })
	if err := f.h.SetTools(ctx, []tool.Tool{keep}); err != nil {
		t.Fatal(err)
	}
	// a new process: tools, providers and models re-supplied, the rest from the log
	var seen string
	g := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{
		Session: f.sess,
		Models: func(ref string) (llm.Model, bool) {
			return f.p.Model(strings.TrimPrefix(ref, "scripted/")), strings.HasPrefix(ref, "scripted/")
		},
	}, keep, drop)
	hook.On(g.h.Hooks(), func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		r := ev.Request
		seen = r.Model.ID + "/" + r.ThinkingLevel + "/" + r.Tools[0].Name + "/" + r.Messages[0].Content.Text()
		if len(r.Tools) != 1 {
			seen += "/too many tools"
		}
		return hook.RequestPatch{}, nil
	})
	if err := g.h.Prompt(ctx, user("second")); err != nil {
		t.Fatal(err)
	}
	if seen != "two/low/keep/first" {
		t.Fatalf("recovered request: %s", seen)
	}
}

func TestSinkMayCallBackIntoTheHarness(t *testing.T) {
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{}, g)
	var h *harness.Harness
	var aborted harness.Aborted
	cfg := harness.Config{
		Session:   f.sess,
		Providers: map[string]llm.Provider{"scripted": f.p},
		Model:     f.p.Model("one"),
		Tools:     []tool.Tool{g},
		Sink: func(ev events.Event) {
			f.rec.sink(ev)
			if ev.Type == events.EvToolExecutionStart {
				h.Steer(user("from the sink"))
				aborted = h.Abort()
			}
		},
	}
	var err error
	if h, err = harness.New(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if err := h.Prompt(context.Background(), user("go")); !errors.Is(err, llm.ErrAborted) {
		t.Fatalf("Prompt: %v", err)
	}
	if len(aborted.Steering) != 1 {
		t.Fatalf("abort from the sink returned %+v", aborted)
	}
	var last uint64
	for _, ev := range f.rec.evs {
		if ev.Seq != last+1 {
			t.Fatalf("events out of sequence: %d after %d", ev.Seq, last)
		}
		last = ev.Seq
	}
}

func TestContinueAfterAFailedReply(t *testing.T) {
	f := newFixture(t, `{"rules":[
		{"times":1,"reply":{"error":{"status":400,"message":"invalid_request_error"}}},
		{"match":{"lastRole":"user"},"reply":{"text":"answered"}}]}`, harness.Config{})
	ctx := context.Background()
	if err := f.h.Prompt(ctx, user("hi")); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Fatalf("Prompt: %v", err)
	}
	// the failed reply is on record, but the model answers the user message
	if err := f.h.Continue(ctx); err != nil {
		t.Fatal(err)
	}
	if got := summary(f.sess.Entries()); got != "user:hi | assistant::error | assistant:answered:stop" {
		t.Fatalf("session: %s", got)
	}
	if err := f.h.Continue(ctx); err == nil {
		t.Fatal("Continue after an answer should have nothing to continue")
	}
}

func TestInterruptedCallsAreClosedOnRecovery(t *testing.T) {
	// a log cut short by a crash: the assistant asked for two tools, no results
	call := func(id, name string) events.Block {
		return events.Block{Type: events.BlockToolCall, ID: id, Name: name, Arguments: []byte(`{}`)}
	}
	asst := events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse, Content: events.Content{Blocks: []events.Block{call("c1", "read"), call("c2", "write")}}}
	sess := agenttest.NewSession(
		events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("go")}},
		events.Entry{Type: events.EntryMessage, Message: &asst},
	)
	reads := 0
	read := newTool("read", func(context.Context, tool.Call) (tool.Result, error) { reads++; return tool.Text("file body"), nil })
	read.spec.Idempotent = true
	writes := 0
	write := newTool("write", func(context.Context, tool.Call) (tool.Result, error) { writes++; return tool.Text("written"), nil })
	f := newFixture(t, `{"rules":[{"match":{"lastRole":"toolResult"},"reply":{"text":"recovered"}}]}`, harness.Config{Session: sess}, read, write)
	if err := f.h.Continue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if reads != 1 || writes != 0 {
		t.Fatalf("reads=%d writes=%d: want the idempotent call run again, the other not", reads, writes)
	}
	want := "user:go | assistant::toolUse | toolResult:file body | toolResult:Tool call write was interrupted before its result was recorded; it was not run again. | assistant:recovered:stop"
	if got := summary(sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
}

func TestWritesHeldDuringTheLastCallFlushWhenTheRunSettles(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{})
	hook.On(f.h.Hooks(), func(ctx context.Context, _ hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		// asked for while the model call is being made
		if err := f.h.Append(ctx, events.Entry{Type: events.EntryCustom, CustomType: "late"}); err != nil {
			return hook.RequestPatch{}, err
		}
		return hook.RequestPatch{}, nil
	})
	if err := f.h.Prompt(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	if got := summary(f.sess.Entries()); got != "user:hi | assistant:ok:stop | custom:late" {
		t.Fatalf("session: %s", got)
	}
}

func TestPromptNeedsAMessage(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{})
	if err := f.h.Prompt(context.Background()); !errors.Is(err, harness.ErrNoPrompt) {
		t.Fatalf("err = %v", err)
	}
	f.h.NextTurn(user("queued"))
	if err := f.h.Prompt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := summary(f.sess.Entries()); got != "user:queued | assistant:ok:stop" {
		t.Fatalf("session: %s", got)
	}
}

func TestNextTurnMessagesSurviveAFailedStart(t *testing.T) {
	broken := errors.New("store down")
	f := failWithHeldWrite(t, broken)
	f.h.NextTurn(user("note"))
	// the held write still fails: the run does not start, the note stays queued
	if err := f.h.Prompt(context.Background(), user("lost prompt")); !errors.Is(err, broken) {
		t.Fatalf("second run: %v", err)
	}
	f.sess.FailAppends(nil)
	if err := f.h.Prompt(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	want := "user:go | assistant::toolUse | custom:held | toolResult:Tool call gate was interrupted before its result was recorded; it was not run again. | user:note | user:hi | assistant:done:stop"
	if got := summary(f.sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
}

func TestTheHeaderComesWithThePath(t *testing.T) {
	// The harness reads the header with the path: its model, thinking
	// level, system prompt and tools rule until the log changes them.
	sess := agenttest.NewSession(
		events.Entry{Type: events.EntrySession, ID: "s1", Model: "scripted/x", ThinkingLevel: "low", SystemPrompt: "sys", Tools: []string{"read"}},
		events.Entry{Type: events.EntryModelChange, Provider: "scripted", ModelID: "y"},
	)
	p, rec := recording(t, `{"rules":[{"reply":{"text":"ok"}}]}`)
	h, err := harness.New(context.Background(), harness.Config{SessionID: "s1", Session: sess, SystemPrompt: "default",
		Providers: map[string]llm.Provider{scripted.Name: rec}, Model: p.Model("one"), Models: scriptedModels(p),
		Tools: []tool.Tool{newTool("read", nil), newTool("bash", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Prompt(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	req, _ := rec.Last()
	var tools []string
	for _, s := range req.Tools {
		tools = append(tools, s.Name)
	}
	if req.Model.Ref() != "scripted/y" || req.ThinkingLevel != "low" || req.SystemPrompt != "sys" || strings.Join(tools, ",") != "read" {
		t.Fatalf("request: model %s, thinking %q, system %q, tools %v", req.Model.Ref(), req.ThinkingLevel, req.SystemPrompt, tools)
	}
}
