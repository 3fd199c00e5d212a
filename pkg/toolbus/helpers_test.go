package toolbus_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/nats-io/nats.go/jetstream"
)

// echoTool returns its "text" argument; idempotent.
type echoTool struct{}

func (echoTool) Spec() events.ToolSpec {
	return events.ToolSpec{Name: "echo", Description: "echo text", Idempotent: true,
		Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (echoTool) Execute(_ context.Context, c tool.Call, onUpdate func(tool.Result)) (tool.Result, error) {
	var a struct {
		Text   string `json:"text"`
		Repeat int    `json:"repeat"`
	}
	_ = json.Unmarshal(c.Arguments, &a)
	if a.Repeat > 0 {
		a.Text = strings.Repeat(a.Text, a.Repeat)
	}
	onUpdate(tool.Text("partial " + a.Text))
	return tool.Result{Content: []events.Block{events.TextBlock(a.Text)},
		Details: json.RawMessage(`{"workspace":` + mustJSON(c.Workspace) + `}`)}, nil
}

// blockTool runs until its context ends or the test releases it; it counts
// its executions per call id. Idempotent as configured.
type blockTool struct {
	name       string
	idempotent bool
	release    chan struct{}
	mu         sync.Mutex
	runs       map[string]int
	started    chan string
}

func newBlockTool(name string, idempotent bool) *blockTool {
	return &blockTool{name: name, idempotent: idempotent, release: make(chan struct{}),
		runs: map[string]int{}, started: make(chan string, 100)}
}

func (b *blockTool) Spec() events.ToolSpec {
	return events.ToolSpec{Name: b.name, Description: "blocks", Idempotent: b.idempotent}
}

func (b *blockTool) Execute(ctx context.Context, c tool.Call, _ func(tool.Result)) (tool.Result, error) {
	b.mu.Lock()
	b.runs[c.ID]++
	b.mu.Unlock()
	b.started <- c.ID
	select {
	case <-ctx.Done():
		return tool.Result{}, ctx.Err()
	case <-b.release:
		return tool.Text("released"), nil
	}
}

func (b *blockTool) runsOf(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[id]
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// env is a provisioned embedded server and a bus over it.
type env struct {
	srv *natstest.Server
	bus *toolbus.Bus
	js  jetstream.JetStream
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := natstest.RunServer(t)
	nc, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	if err := toolbus.Provision(ctx, js, events.Names{}, toolbus.ProvisionOptions{}); err != nil {
		t.Fatal(err)
	}
	bus, err := toolbus.New(nc, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, bus: bus, js: js}
}

// newBus opens another connection (another worker "process").
func (e *env) newBus(t *testing.T) *toolbus.Bus {
	t.Helper()
	nc := natstest.Connect(t, e.srv.Server)
	bus, err := toolbus.New(nc, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	return bus
}

// start runs a worker until the test ends (or until stop is called).
func (e *env) start(t *testing.T, bus *toolbus.Bus, w toolbus.Worker) (stop func()) {
	t.Helper()
	if w.ShutdownTimeout == 0 {
		w.ShutdownTimeout = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := bus.Start(ctx, w)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stop = func() { cancel(); _ = s.Wait() }
	t.Cleanup(stop)
	return stop
}

// collector gathers every result of the results stream.
type collector struct {
	mu      sync.Mutex
	results []toolbus.Result
	changed chan struct{}
}

func (e *env) collect(t *testing.T) *collector {
	t.Helper()
	c := &collector{changed: make(chan struct{}, 1)}
	stop, err := e.bus.ConsumeResults(context.Background(), events.SessionRef{}, func(r toolbus.Result) {
		c.mu.Lock()
		c.results = append(c.results, r)
		c.mu.Unlock()
		select {
		case c.changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return c
}

// waitN waits until at least n results arrived and returns them all.
func (c *collector) waitN(t *testing.T, n int) []toolbus.Result {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		got := append([]toolbus.Result(nil), c.results...)
		c.mu.Unlock()
		if len(got) >= n {
			for _, r := range got {
				if r.Err != nil {
					t.Fatalf("invalid result at seq %d: %v", r.Seq, r.Err)
				}
			}
			return got
		}
		select {
		case <-c.changed:
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waited 20s for %d results, have %d: %+v", n, len(got), got)
		}
	}
}

func call(sid, id, name, args string) events.ToolCall {
	return events.ToolCall{SessionID: sid, ToolCallID: id, Name: name, Arguments: json.RawMessage(args)}
}

// consumerInfo returns the pool's consumer state.
func (e *env) consumerInfo(t *testing.T, pool string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := e.js.Consumer(context.Background(), events.Names{}.ToolsStream(), events.Names{}.ToolPoolConsumer(pool))
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// waitFor polls cond until it holds or 20s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	kittest.Eventually(t, 20*time.Second, what, cond)
}
