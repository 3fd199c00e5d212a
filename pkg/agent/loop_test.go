package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/tool"
)

func TestEventOrderOfAToolTurn(t *testing.T) {
	p := script(t, `{"rules":[
		{"match":{"lastRole":"user"},"reply":{"text":"looking","toolCalls":[{"id":"a","name":"ls"}]}},
		{"match":{"lastRole":"toolResult","tool":"ls"},"reply":{"text":"done"}}]}`)
	rec := &recorder{}
	c := &agent.Context{Tools: []tool.Tool{textTool("ls", "a.txt")}}
	added, err := agent.Run(context.Background(), config(p, rec), c, []events.Message{user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	assertSeq(t, rec.short(), []string{
		"agent_start", "turn_start",
		"message_start:user", "message_end:user",
		"message_start:assistant", "message_end:assistant:toolUse",
		"tool_execution_start:a", "tool_execution_end:a",
		"message_start:toolResult:a", "message_end:toolResult:a",
		"turn_end:[a]",
		"turn_start",
		"message_start:assistant", "message_end:assistant:stop",
		"turn_end:[]",
		"agent_end",
	})
	if len(added) != 4 || len(c.Messages) != 4 || resultText(added[2]) != "a.txt" {
		t.Fatalf("added = %+v", added)
	}
	end := rec.of(events.EvAgentEnd)[0]
	if len(end.Messages) != 4 {
		t.Fatalf("agent_end has %d messages", len(end.Messages))
	}
	if n := len(rec.of(events.EvMessageUpdate)); n != 3 {
		t.Fatalf("%d message_update events, want 3 (text, tool call, text)", n)
	}
}

func TestParallelToolsEndInFinishOrderResultsInCallOrder(t *testing.T) {
	p := script(t, `{"rules":[
		{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"slow","name":"slow"},{"id":"fast","name":"fast"}]}},
		{"reply":{"text":"ok"}}]}`)
	fastDone := make(chan struct{})
	slow := newTool("slow", func(ctx context.Context, _ tool.Call, _ func(tool.Result)) (tool.Result, error) {
		<-fastDone // finishes only after fast has finished
		return tool.Text("slow out"), nil
	})
	fast := newTool("fast", func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
		return tool.Text("fast out"), nil
	})
	rec := &recorder{}
	cfg := config(p, rec)
	cfg.Sink = func(ev events.Event) {
		rec.sink(ev)
		if ev.Type == events.EvToolExecutionEnd && ev.ToolCallID == "fast" {
			close(fastDone)
		}
	}
	c := &agent.Context{Tools: []tool.Tool{slow, fast}}
	if _, err := agent.Run(context.Background(), cfg, c, []events.Message{user("go")}); err != nil {
		t.Fatal(err)
	}
	got := rec.short()[6:13]
	assertSeq(t, got, []string{
		"tool_execution_start:slow", "tool_execution_start:fast",
		"tool_execution_end:fast", "tool_execution_end:slow",
		"message_start:toolResult:slow", "message_end:toolResult:slow",
		"message_start:toolResult:fast",
	})
	if c.Messages[2].ToolCallID != "slow" || c.Messages[3].ToolCallID != "fast" {
		t.Fatalf("context order: %s, %s", c.Messages[2].ToolCallID, c.Messages[3].ToolCallID)
	}
}

func TestSequentialToolMakesTheBatchSequential(t *testing.T) {
	p := script(t, `{"rules":[
		{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"1","name":"a"},{"id":"2","name":"b"}]}},
		{"reply":{"text":"ok"}}]}`)
	running := make(chan struct{}, 2)
	var overlap bool
	mk := func(name string) *fnTool {
		return newTool(name, func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
			select {
			case running <- struct{}{}:
			default:
			}
			if len(running) > 1 {
				overlap = true
			}
			<-running
			return tool.Text(name), nil
		})
	}
	a, b := mk("a"), mk("b")
	b.spec.Mode = events.Sequential
	rec := &recorder{}
	if _, err := agent.Run(context.Background(), config(p, rec), &agent.Context{Tools: []tool.Tool{a, b}}, []events.Message{user("go")}); err != nil {
		t.Fatal(err)
	}
	if overlap {
		t.Fatal("tools overlapped in a sequential batch")
	}
	assertSeq(t, rec.short()[6:10], []string{"tool_execution_start:1", "tool_execution_end:1", "tool_execution_start:2", "tool_execution_end:2"})
}

func TestToolFailuresBecomeErrorResults(t *testing.T) {
	p := script(t, `{"rules":[
		{"match":{"lastRole":"user"},"reply":{"toolCalls":[
			{"id":"u","name":"nope"},
			{"id":"v","name":"strict","arguments":{"n":"x"}},
			{"id":"p","name":"boom"},
			{"id":"e","name":"fails"},
			{"id":"b","name":"blocked"}]}},
		{"reply":{"text":"ok"}}]}`)
	strict := newTool("strict", func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
		return tool.Text("ran"), nil
	})
	strict.spec.Parameters = []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	boom := newTool("boom", func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) { panic("kaboom") })
	fails := newTool("fails", func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
		return tool.Result{}, errors.New("disk full")
	})
	blocked := textTool("blocked", "should not run")
	hooks := hook.New(nil)
	hook.On(hooks, func(_ context.Context, ev hook.ToolCallEvent) (hook.ToolCallResult, error) {
		if ev.ToolName == "blocked" {
			return hook.ToolCallResult{Block: true, Reason: "policy says no"}, nil
		}
		return hook.ToolCallResult{}, nil
	})
	rec := &recorder{}
	cfg := config(p, rec)
	cfg.Hooks = hooks
	c := &agent.Context{Tools: []tool.Tool{strict, boom, fails, blocked}}
	added, err := agent.Run(context.Background(), cfg, c, []events.Message{user("go")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"u": "Tool nope not found",
		"v": "argument /n: got string, want integer",
		"p": "tool boom panicked: kaboom",
		"e": "disk full",
		"b": "policy says no",
	}
	results := added[2:7]
	for _, r := range results {
		if !r.IsError || !strings.Contains(resultText(r), want[r.ToolCallID]) {
			t.Errorf("result %s = %q (isError %v), want error containing %q", r.ToolCallID, resultText(r), r.IsError, want[r.ToolCallID])
		}
	}
	if last := added[len(added)-1]; last.Content.Text() != "ok" {
		t.Fatalf("the run did not go on: last = %+v", last)
	}
}

func TestUpdatesAfterFinishAreDropped(t *testing.T) {
	p := script(t, `{"rules":[{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"t","name":"t"}]}},{"reply":{"text":"ok"}}]}`)
	var late func(tool.Result)
	tl := newTool("t", func(_ context.Context, _ tool.Call, up func(tool.Result)) (tool.Result, error) {
		up(tool.Text("half"))
		late = up
		return tool.Text("all"), nil
	})
	rec := &recorder{}
	if _, err := agent.Run(context.Background(), config(p, rec), &agent.Context{Tools: []tool.Tool{tl}}, []events.Message{user("go")}); err != nil {
		t.Fatal(err)
	}
	late(tool.Text("too late"))
	ups := rec.of(events.EvToolExecutionUpdate)
	if len(ups) != 1 || ups[0].Partial.Content.Text() != "half" {
		t.Fatalf("updates = %+v", ups)
	}
	assertSeq(t, rec.short()[6:9], []string{"tool_execution_start:t", "tool_execution_update:t", "tool_execution_end:t"})
}

func TestToolResultHooksPatchInAChain(t *testing.T) {
	p := script(t, `{"rules":[{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"t","name":"t"}]}},{"reply":{"text":"ok"}}]}`)
	hooks := hook.New(nil)
	hook.On(hooks, func(_ context.Context, ev hook.ToolResultEvent) (hook.ToolResultPatch, error) {
		return hook.ToolResultPatch{Content: []events.Block{events.TextBlock("[1] " + ev.Content[0].Text)}}, nil
	})
	hook.On(hooks, func(_ context.Context, ev hook.ToolResultEvent) (hook.ToolResultPatch, error) {
		yes := true
		return hook.ToolResultPatch{Content: []events.Block{events.TextBlock("[2] " + ev.Content[0].Text)}, IsError: &yes}, nil
	})
	cfg := config(p, &recorder{})
	cfg.Hooks = hooks
	added, err := agent.Run(context.Background(), cfg, &agent.Context{Tools: []tool.Tool{textTool("t", "raw")}}, []events.Message{user("go")})
	if err != nil {
		t.Fatal(err)
	}
	if r := added[2]; resultText(r) != "[2] [1] raw" || !r.IsError {
		t.Fatalf("result = %q isError=%v", resultText(r), r.IsError)
	}
}

func TestBatchEndsTheRunOnlyWhenEveryResultTerminates(t *testing.T) {
	term := func(name string, yes bool) *fnTool {
		return newTool(name, func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
			return tool.Result{Content: []events.Block{events.TextBlock(name)}, Terminate: yes}, nil
		})
	}
	s := `{"rules":[{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"1","name":"a"},{"id":"2","name":"b"}]}},{"reply":{"text":"after"}}]}`
	// both terminate: no second call
	p := script(t, s)
	added, err := agent.Run(context.Background(), config(p, &recorder{}), &agent.Context{Tools: []tool.Tool{term("a", true), term("b", true)}}, []events.Message{user("go")})
	if err != nil || p.Calls() != 1 || len(added) != 4 {
		t.Fatalf("all terminate: calls=%d added=%d err=%v", p.Calls(), len(added), err)
	}
	// one terminates: the model is asked again
	p = script(t, s)
	if _, err := agent.Run(context.Background(), config(p, &recorder{}), &agent.Context{Tools: []tool.Tool{term("a", true), term("b", false)}}, []events.Message{user("go")}); err != nil || p.Calls() != 2 {
		t.Fatalf("one terminates: calls=%d err=%v", p.Calls(), err)
	}
}

func TestLengthReplyWithToolCallsRunsNone(t *testing.T) {
	p := script(t, `{"rules":[
		{"match":{"lastRole":"user"},"reply":{"stopReason":"length","toolCalls":[{"id":"1","name":"w"},{"id":"2","name":"w"}]}},
		{"reply":{"text":"retrying properly"}}]}`)
	ran := false
	w := newTool("w", func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
		ran = true
		return tool.Text("x"), nil
	})
	rec := &recorder{}
	added, err := agent.Run(context.Background(), config(p, rec), &agent.Context{Tools: []tool.Tool{w}}, []events.Message{user("go")})
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Fatal("a tool call of a length-cut reply ran")
	}
	for _, r := range added[2:4] {
		if !r.IsError || !strings.Contains(resultText(r), "output token limit") {
			t.Fatalf("result = %q", resultText(r))
		}
	}
	if p.Calls() != 2 || added[len(added)-1].Content.Text() != "retrying properly" {
		t.Fatalf("the model was not asked again: calls=%d", p.Calls())
	}
	assertSeq(t, rec.short()[6:12], []string{"tool_execution_start:1", "tool_execution_end:1", "tool_execution_start:2", "tool_execution_end:2", "message_start:toolResult:1", "message_end:toolResult:1"})
}

func TestSteeringIsInjectedAfterTheBatchBeforeTheNextCall(t *testing.T) {
	p := script(t, `{"rules":[
		{"match":{"lastRole":"user","contains":"go"},"reply":{"toolCalls":[{"id":"1","name":"a"},{"id":"2","name":"b"}]}},
		{"match":{"lastRole":"user","contains":"steer"},"reply":{"text":"steered"}},
		{"reply":{"text":"unexpected"}}]}`)
	var queue []events.Message
	var mu = make(chan struct{}, 1)
	a := newTool("a", func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
		mu <- struct{}{}
		queue = append(queue, user("steer left"))
		<-mu
		return tool.Text("a"), nil
	})
	rec := &recorder{}
	cfg := config(p, rec)
	cfg.Steering = func() []events.Message {
		mu <- struct{}{}
		defer func() { <-mu }()
		q := queue
		queue = nil
		return q
	}
	added, err := agent.Run(context.Background(), cfg, &agent.Context{Tools: []tool.Tool{a, textTool("b", "b")}}, []events.Message{user("go")})
	if err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range added {
		roles = append(roles, m.Role+":"+m.ToolCallID+m.Content.Text())
	}
	want := "user:go assistant: toolResult:1a toolResult:2b user:steer left assistant:steered"
	if strings.Join(roles, " ") != want {
		t.Fatalf("messages: %s\nwant:     %s", strings.Join(roles, " "), want)
	}
	seq := rec.short()
	assertSeq(t, seq[len(seq)-8:], []string{"turn_end:[1,2]", "turn_start", "message_start:user", "message_end:user", "message_start:assistant", "message_end:assistant:stop", "turn_end:[]", "agent_end"})
}

func TestFollowUpsOnlyWhenTheAgentWouldStop(t *testing.T) {
	p := script(t, `{"rules":[{"match":{"contains":"one"},"reply":{"text":"1"}},{"match":{"contains":"two"},"reply":{"text":"2"}},{"reply":{"text":"0"}}]}`)
	follow := [][]events.Message{{user("one")}, {user("two")}}
	steerCalls := 0
	cfg := config(p, &recorder{})
	cfg.Steering = func() []events.Message { steerCalls++; return nil }
	cfg.FollowUp = func() []events.Message {
		if len(follow) == 0 {
			return nil
		}
		f := follow[0]
		follow = follow[1:]
		return f
	}
	added, err := agent.Run(context.Background(), cfg, &agent.Context{}, []events.Message{user("start")})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range added {
		texts = append(texts, m.Content.Text())
	}
	if strings.Join(texts, ",") != "start,0,one,1,two,2" {
		t.Fatalf("messages = %v", texts)
	}
}

func TestErrorReplyEndsTheRunAndLeavesQueues(t *testing.T) {
	p := script(t, `{"rules":[{"reply":{"error":{"status":400,"message":"bad request"}}}]}`)
	pulled := 0
	cfg := config(p, &recorder{})
	cfg.FollowUp = func() []events.Message { pulled++; return []events.Message{user("later")} }
	added, err := agent.Run(context.Background(), cfg, &agent.Context{}, []events.Message{user("go")})
	if !errors.Is(err, llm.ErrInvalidRequest) {
		t.Fatalf("err = %v", err)
	}
	if pulled != 0 {
		t.Fatal("follow-ups were taken from the queue by a failed run")
	}
	last := added[len(added)-1]
	if last.StopReason != events.StopError || !strings.Contains(last.ErrorMessage, "bad request") {
		t.Fatalf("last = %+v", last)
	}
}

func TestThrowingContextHookGivesAnErrorMessage(t *testing.T) {
	p := script(t, `{"rules":[{"reply":{"text":"ok"}}]}`)
	var reported []events.Event
	hooks := hook.New(func(ev events.Event) { reported = append(reported, ev) })
	hook.On(hooks, func(context.Context, hook.ContextEvent) (hook.ContextResult, error) { panic("context hook broke") })
	cfg := config(p, &recorder{})
	cfg.Hooks = hooks
	added, err := agent.Run(context.Background(), cfg, &agent.Context{}, []events.Message{user("go")})
	if err == nil || p.Calls() != 0 {
		t.Fatalf("err=%v calls=%d", err, p.Calls())
	}
	last := added[len(added)-1]
	if last.StopReason != events.StopError || !strings.Contains(last.ErrorMessage, "context hook broke") {
		t.Fatalf("last = %+v", last)
	}
	if len(reported) != 1 || reported[0].Type != events.EvHookError || reported[0].Hook != "context" {
		t.Fatalf("reported = %+v", reported)
	}
}

func TestNextTurnHookReplacesContextAndModelAndStops(t *testing.T) {
	p := script(t, `{"rules":[
		{"match":{"lastRole":"user","contains":"go"},"reply":{"toolCalls":[{"id":"1","name":"t"}]}},
		{"match":{"lastRole":"user","contains":"replaced"},"reply":{"toolCalls":[{"id":"2","name":"t"}]}},
		{"reply":{"text":"never"}}]}`)
	var models []string
	hooks := hook.New(nil)
	hook.On(hooks, func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		models = append(models, ev.Request.Model.ID)
		return hook.RequestPatch{}, nil
	})
	turns := 0
	hook.On(hooks, func(_ context.Context, ev hook.NextTurnEvent) (hook.NextTurnResult, error) {
		turns++
		if turns == 1 {
			m := ev.Model
			m.ID = "other"
			return hook.NextTurnResult{Messages: []events.Message{user("replaced")}, Model: &m}, nil
		}
		return hook.NextTurnResult{Stop: true}, nil
	})
	cfg := config(p, &recorder{})
	cfg.Hooks = hooks
	c := &agent.Context{Tools: []tool.Tool{textTool("t", "x")}}
	if _, err := agent.Run(context.Background(), cfg, c, []events.Message{user("go")}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(models, ",") != "test,other" || p.Calls() != 2 {
		t.Fatalf("models = %v, calls = %d", models, p.Calls())
	}
	if c.Messages[0].Content.Text() != "replaced" {
		t.Fatalf("context not replaced: %+v", c.Messages[0])
	}
}

func TestAbortDuringAToolEndsWithAnAbortedMessage(t *testing.T) {
	p := script(t, `{"rules":[{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"1","name":"wait"}]}},{"reply":{"text":"never"}}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	w := newTool("wait", func(ctx context.Context, _ tool.Call, _ func(tool.Result)) (tool.Result, error) {
		cancel()
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
	rec := &recorder{}
	added, err := agent.Run(ctx, config(p, rec), &agent.Context{Tools: []tool.Tool{w}}, []events.Message{user("go")})
	if !errors.Is(err, llm.ErrAborted) {
		t.Fatalf("err = %v", err)
	}
	if p.Calls() != 1 {
		t.Fatalf("the model was called %d times after abort", p.Calls())
	}
	last := added[len(added)-1]
	if last.Role != events.RoleAssistant || last.StopReason != events.StopAborted {
		t.Fatalf("last = %+v", last)
	}
	seq := rec.short()
	assertSeq(t, seq[len(seq)-5:], []string{"turn_start", "message_start:assistant", "message_end:assistant:aborted", "turn_end:[]", "agent_end"})
}

func TestContinueNeedsSomethingToAnswer(t *testing.T) {
	p := script(t, `{"rules":[{"reply":{"text":"ok"}}]}`)
	c := &agent.Context{Messages: []events.Message{user("hi"), {Role: events.RoleAssistant, StopReason: events.StopEnd, Content: events.TextContent("yo")}}}
	if _, err := agent.Continue(context.Background(), config(p, &recorder{}), c); !errors.Is(err, agent.ErrNothingToContinue) {
		t.Fatalf("err = %v", err)
	}
	c.Messages[1].StopReason = events.StopError // a failed reply is skipped: the user message is answered again
	if added, err := agent.Continue(context.Background(), config(p, &recorder{}), c); err != nil || len(added) != 1 {
		t.Fatalf("added=%v err=%v", added, err)
	}
}

func TestToolCallHookRewritesArguments(t *testing.T) {
	p := script(t, `{"rules":[
		{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"1","name":"echo","arguments":{"s":"rm -rf /"}},{"id":"2","name":"echo","arguments":{"s":"bad"}}]}},
		{"reply":{"text":"ok"}}]}`)
	echo := newTool("echo", func(_ context.Context, c tool.Call, _ func(tool.Result)) (tool.Result, error) {
		return tool.Text(string(c.Arguments)), nil
	})
	echo.spec.Parameters = []byte(`{"type":"object","properties":{"s":{"type":"string"}},"required":["s"]}`)
	hooks := hook.New(nil)
	hook.On(hooks, func(_ context.Context, ev hook.ToolCallEvent) (hook.ToolCallResult, error) {
		if ev.ToolCallID == "2" {
			return hook.ToolCallResult{Args: []byte(`{"s":5}`)}, nil
		}
		return hook.ToolCallResult{Args: []byte(`{"s":"echo safe"}`)}, nil
	})
	hook.On(hooks, func(_ context.Context, ev hook.ToolCallEvent) (hook.ToolCallResult, error) {
		if ev.ToolCallID == "1" && string(ev.Args) != `{"s":"echo safe"}` {
			return hook.ToolCallResult{Block: true, Reason: "second handler did not see the rewrite"}, nil
		}
		return hook.ToolCallResult{}, nil
	})
	cfg := config(p, &recorder{})
	cfg.Hooks = hooks
	added, err := agent.Run(context.Background(), cfg, &agent.Context{Tools: []tool.Tool{echo}}, []events.Message{user("go")})
	if err != nil {
		t.Fatal(err)
	}
	if r := added[2]; r.IsError || resultText(r) != `{"s":"echo safe"}` {
		t.Fatalf("rewritten call: %q (isError %v)", resultText(r), r.IsError)
	}
	if r := added[3]; !r.IsError || !strings.Contains(resultText(r), "argument /s: got number, want string") {
		t.Fatalf("invalid rewrite: %q", resultText(r))
	}
}
