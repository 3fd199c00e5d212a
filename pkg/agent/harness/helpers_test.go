package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/tool"
)

type fnTool struct {
	spec events.ToolSpec
	run  func(ctx context.Context, c tool.Call) (tool.Result, error)
}

func (f *fnTool) Spec() events.ToolSpec { return f.spec }
func (f *fnTool) Execute(ctx context.Context, c tool.Call, _ func(tool.Result)) (tool.Result, error) {
	return f.run(ctx, c)
}

func newTool(name string, run func(ctx context.Context, c tool.Call) (tool.Result, error)) *fnTool {
	return &fnTool{spec: events.ToolSpec{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)}, run: run}
}

// gate is a tool that signals when it starts and waits to be released (or
// for its ctx to end).
type gate struct {
	*fnTool
	started chan struct{}
	release chan struct{}
}

func newGate(name string) *gate {
	g := &gate{started: make(chan struct{}, 16), release: make(chan struct{})}
	g.fnTool = newTool(name, func(ctx context.Context, _ tool.Call) (tool.Result, error) {
		g.started <- struct{}{}
		select {
		case <-g.release:
			return tool.Text(name + " done"), nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	})
	return g
}

type recorder struct {
	mu  sync.Mutex
	evs []events.Event
}

func (r *recorder) sink(ev events.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *recorder) of(typ string) []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []events.Event
	for _, ev := range r.evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

type fixture struct {
	h    *harness.Harness
	sess *agenttest.Session
	rec  *recorder
	p    *scripted.Provider
}

func newFixture(t testing.TB, script string, cfg harness.Config, tools ...tool.Tool) *fixture {
	t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sess: agenttest.NewSession(), rec: &recorder{}, p: scripted.New(sc)}
	if cfg.Session == nil {
		cfg.Session = f.sess
	} else {
		f.sess = cfg.Session.(*agenttest.Session)
	}
	cfg.SessionID = "s1"
	cfg.Providers = map[string]llm.Provider{scripted.Name: f.p}
	if cfg.Model.ID == "" {
		cfg.Model = f.p.Model("one")
	}
	if cfg.Sink == nil {
		cfg.Sink = f.rec.sink
	}
	cfg.Tools = tools
	f.h, err = harness.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// prompt runs Prompt on its own goroutine; the returned channel gives its
// error.
func (f *fixture) prompt(text string) chan error {
	done := make(chan error, 1)
	go func() { done <- f.h.Prompt(context.Background(), user(text)) }()
	return done
}

func user(s string) events.Message {
	return events.Message{Role: events.RoleUser, Content: events.TextContent(s)}
}

func wait(t testing.TB, ch chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not settle within 10 s")
		return nil
	}
}

func recv(t testing.TB, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a tool to start")
	}
}

// summary renders the session's entries as "type[:role:text]".
func summary(entries []events.Entry) string {
	var out []string
	for _, e := range entries {
		s := e.Type
		switch e.Type {
		case events.EntryMessage:
			m := e.Message
			s = m.Role + ":" + m.Content.Text()
			if m.Role == events.RoleAssistant {
				s += ":" + string(m.StopReason)
			}
		case events.EntryModelChange:
			s += ":" + e.ModelID
		case events.EntryCustom:
			s += ":" + e.CustomType
		}
		out = append(out, s)
	}
	return strings.Join(out, " | ")
}

// onNextTurnStop registers a next_turn hook that stops the run when stop
// says so.
func onNextTurnStop(h *harness.Harness, stop func() bool) func() {
	return hook.On(h.Hooks(), func(context.Context, hook.NextTurnEvent) (hook.NextTurnResult, error) {
		return hook.NextTurnResult{Stop: stop()}, nil
	})
}

// recording returns a scripted provider for script and a Recorder in front
// of it.
func recording(t testing.TB, script string) (*scripted.Provider, *agenttest.Recorder) {
	t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	p := scripted.New(sc)
	return p, &agenttest.Recorder{Next: p}
}

// scriptedModels resolves every scripted/<id> reference to p's model id.
func scriptedModels(p *scripted.Provider) func(string) (llm.Model, bool) {
	return func(ref string) (llm.Model, bool) {
		id, ok := strings.CutPrefix(ref, scripted.Name+"/")
		return p.Model(id), ok
	}
}
