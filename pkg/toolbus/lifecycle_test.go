package toolbus_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
)

func waitStarted(t *testing.T, b *blockTool, ids ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	deadline := time.After(20 * time.Second)
	for len(want) > 0 {
		select {
		case id := <-b.started:
			delete(want, id)
		case <-deadline:
			t.Fatalf("calls %v never started on %s", want, b.name)
		}
	}
}

func resultsByID(rs []toolbus.Result) map[string]toolbus.Result {
	m := map[string]toolbus.Result{}
	for _, r := range rs {
		m[r.ToolCallID] = r
	}
	return m
}

// A worker that vanishes mid-call (its connection dies): the idempotent call
// runs again elsewhere; the non-idempotent one gets the interrupted result.
func TestRedeliveryAfterAWorkerVanishes(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	onceA, againA := newBlockTool("once", false), newBlockTool("again", true)
	onceB, againB := newBlockTool("once", false), newBlockTool("again", true)
	close(onceB.release)
	close(againB.release)

	ncA := natstest.Connect(t, e.srv.Server)
	busA, err := toolbus.New(ncA, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	w := toolbus.Worker{Pool: "p", AckWait: 500 * time.Millisecond, ShutdownTimeout: time.Millisecond}
	wa := w
	wa.Name, wa.Tools = "A", []tool.Tool{onceA, againA}
	e.start(t, busA, wa)
	ctx := context.Background()
	for _, c := range []events.ToolCall{call("s1", "n1", "once", `{}`), call("s1", "i1", "again", `{}`)} {
		if err := e.bus.Dispatch(ctx, "p", c); err != nil {
			t.Fatal(err)
		}
	}
	waitStarted(t, onceA, "n1")
	waitStarted(t, againA, "i1")
	ncA.Close() // A is gone as far as the bus can tell

	wb := w
	wb.Name, wb.Tools = "B", []tool.Tool{onceB, againB}
	e.start(t, e.newBus(t), wb)
	got := resultsByID(results.waitN(t, 2))
	if r := got["n1"]; !r.IsError || !r.Interrupted || !strings.Contains(r.Content[0].Text, "interrupted") || r.Worker != "B" {
		t.Errorf("non-idempotent result = %+v, want B's interrupted error", r.ToolResult)
	}
	if r := got["i1"]; r.IsError || r.Content[0].Text != "released" || r.Worker != "B" {
		t.Errorf("idempotent result = %+v, want B's run", r.ToolResult)
	}
	if onceB.runsOf("n1") != 0 || againB.runsOf("i1") != 1 {
		t.Errorf("B ran once %d times, again %d times; want 0 and 1", onceB.runsOf("n1"), againB.runsOf("i1"))
	}
	waitFor(t, "both calls to be acknowledged", func() bool {
		info := e.consumerInfo(t, "p")
		return info.NumAckPending == 0 && info.NumPending == 0
	})
	assertResultCount(t, e, 2)
}

func assertResultCount(t *testing.T, e *env, want uint64) {
	t.Helper()
	s, err := e.js.Stream(context.Background(), "CAIRN_RESULTS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != want {
		t.Errorf("CAIRN_RESULTS holds %d results, want %d", info.State.Msgs, want)
	}
}

func TestCancelStopsTheSessionsRunningCalls(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	b := newBlockTool("block", true)
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{b}})
	ctx := context.Background()
	for _, c := range []events.ToolCall{call("s1", "a", "block", `{}`), call("s2", "b", "block", `{}`)} {
		if err := e.bus.Dispatch(ctx, "p", c); err != nil {
			t.Fatal(err)
		}
	}
	waitStarted(t, b, "a", "b")
	if err := e.bus.Cancel(ctx, events.DefaultRef("s1")); err != nil {
		t.Fatal(err)
	}
	r := results.waitN(t, 1)[0]
	if r.ToolCallID != "a" || !r.IsError || !strings.Contains(r.Content[0].Text, "cancelled: the session was aborted") {
		t.Fatalf("result = %+v, want the cancelled error for a", r.ToolResult)
	}
	if err := e.bus.Cancel(ctx, events.DefaultRef("s2"), "other-call"); err != nil {
		t.Fatal(err)
	}
	if err := e.bus.Cancel(ctx, events.DefaultRef("s2"), "b"); err != nil {
		t.Fatal(err)
	}
	rs := results.waitN(t, 2)
	if rs[1].ToolCallID != "b" || !rs[1].IsError {
		t.Fatalf("second result = %+v, want b cancelled", rs[1].ToolResult)
	}
	if b.runsOf("a") != 1 || b.runsOf("b") != 1 {
		t.Errorf("runs a=%d b=%d, want 1 each", b.runsOf("a"), b.runsOf("b"))
	}
}

// longTool runs for a fixed time, longer than the consumer's AckWait.
type longTool struct {
	d    time.Duration
	runs atomic.Int64
}

func (l *longTool) Spec() events.ToolSpec { return events.ToolSpec{Name: "long"} }
func (l *longTool) Execute(ctx context.Context, _ tool.Call, _ func(tool.Result)) (tool.Result, error) {
	l.runs.Add(1)
	select {
	case <-time.After(l.d):
		return tool.Text("done"), nil
	case <-ctx.Done():
		return tool.Result{}, ctx.Err()
	}
}

func TestInProgressAcksKeepALongCall(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	l := &longTool{d: 2 * time.Second}
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{l}, AckWait: 300 * time.Millisecond})
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{l}, AckWait: 300 * time.Millisecond})
	if err := e.bus.Dispatch(context.Background(), "p", call("s1", "c1", "long", `{}`)); err != nil {
		t.Fatal(err)
	}
	r := results.waitN(t, 1)[0]
	if r.IsError || r.Content[0].Text != "done" {
		t.Fatalf("result = %+v", r.ToolResult)
	}
	if n := l.runs.Load(); n != 1 {
		t.Errorf("the call ran %d times, want 1", n)
	}
	if info := e.consumerInfo(t, "p"); info.NumRedelivered != 0 {
		t.Errorf("consumer redelivered %d messages, want 0", info.NumRedelivered)
	}
}

func TestTimeoutGivesAnErrorResult(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	b := newBlockTool("block", true)
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{b}})
	c := call("s1", "c1", "block", `{}`)
	c.TimeoutMs = 50
	if err := e.bus.Dispatch(context.Background(), "p", c); err != nil {
		t.Fatal(err)
	}
	r := results.waitN(t, 1)[0]
	if !r.IsError || !strings.Contains(r.Content[0].Text, "timed out after 50ms") {
		t.Fatalf("result = %+v, want a timeout error", r.ToolResult)
	}
}

// panicTool panics; the worker must survive and answer.
type panicTool struct{}

func (panicTool) Spec() events.ToolSpec { return events.ToolSpec{Name: "panic"} }
func (panicTool) Execute(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
	panic("boom")
}

func TestAPanickingToolGivesAnErrorResult(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{panicTool{}, echoTool{}}})
	ctx := context.Background()
	_ = e.bus.Dispatch(ctx, "p", call("s1", "c1", "panic", `{}`))
	_ = e.bus.Dispatch(ctx, "p", call("s1", "c2", "echo", `{"text":"still here"}`))
	got := resultsByID(results.waitN(t, 2))
	if r := got["c1"]; !r.IsError || !strings.Contains(r.Content[0].Text, "panicked: boom") {
		t.Errorf("panic result = %+v", r.ToolResult)
	}
	if r := got["c2"]; r.IsError || r.Content[0].Text != "still here" {
		t.Errorf("next result = %+v", r.ToolResult)
	}
}

// Graceful shutdown: a call that cannot finish by the deadline is handed
// back and answered by another worker; the stopped worker takes nothing more.
func TestShutdownHandsBackWhatItCannotFinish(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	a := newBlockTool("block", true)
	b := newBlockTool("block", true)
	close(b.release)
	stopA := e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Name: "A", Tools: []tool.Tool{a}, ShutdownTimeout: 50 * time.Millisecond})
	ctx := context.Background()
	if err := e.bus.Dispatch(ctx, "p", call("s1", "c1", "block", `{}`)); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, a, "c1")
	stopA()
	if err := e.bus.Dispatch(ctx, "p", call("s1", "c2", "block", `{}`)); err != nil {
		t.Fatal(err)
	}
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Name: "B", Tools: []tool.Tool{b}})
	for _, r := range results.waitN(t, 2) {
		if r.IsError || r.Worker != "B" {
			t.Errorf("result %s = %+v, want B's success", r.ToolCallID, r.ToolResult)
		}
	}
	if a.runsOf("c2") != 0 {
		t.Error("the stopped worker took a call after it stopped")
	}
	waitFor(t, "the queue to drain", func() bool {
		info := e.consumerInfo(t, "p")
		return info.NumAckPending == 0 && info.NumPending == 0
	})
	assertResultCount(t, e, 2)
}

func TestAResultOverThePayloadLimitBecomesAnError(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{echoTool{}}})
	if err := e.bus.Dispatch(context.Background(), "p", call("s1", "c1", "echo", `{"text":"x","repeat":2000000}`)); err != nil {
		t.Fatal(err)
	}
	r := results.waitN(t, 1)[0]
	if !r.IsError || !strings.Contains(r.Content[0].Text, "over the bus's limit") {
		t.Fatalf("result = %.200v", r.Content[0].Text)
	}
}

// A call that keeps losing its worker stops being run after MaxDeliveries.
func TestACallDeliveredTooOftenGetsAnErrorResult(t *testing.T) {
	e := newEnv(t)
	results := e.collect(t)
	a := newBlockTool("block", true)
	b := newBlockTool("block", true)
	ncA := natstest.Connect(t, e.srv.Server)
	busA, err := toolbus.New(ncA, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	e.start(t, busA, toolbus.Worker{Pool: "p", Name: "A", Tools: []tool.Tool{a}, AckWait: 300 * time.Millisecond})
	if err := e.bus.Dispatch(context.Background(), "p", call("s1", "c1", "block", `{}`)); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, a, "c1")
	ncA.Close()
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Name: "B", Tools: []tool.Tool{b}, AckWait: 300 * time.Millisecond, MaxDeliveries: 1})
	r := results.waitN(t, 1)[0]
	if !r.IsError || r.Worker != "B" || !strings.Contains(r.Content[0].Text, "delivered 2 times without completing (the limit is 1)") {
		t.Fatalf("result = %+v", r.ToolResult)
	}
	if b.runsOf("c1") != 0 {
		t.Errorf("B ran the call %d times, want 0", b.runsOf("c1"))
	}
}
