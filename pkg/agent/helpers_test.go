package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// fnTool is a tool made of a function.
type fnTool struct {
	spec events.ToolSpec
	run  func(ctx context.Context, c tool.Call, up func(tool.Result)) (tool.Result, error)
}

func (f *fnTool) Spec() events.ToolSpec { return f.spec }
func (f *fnTool) Execute(ctx context.Context, c tool.Call, up func(tool.Result)) (tool.Result, error) {
	return f.run(ctx, c, up)
}

func newTool(name string, run func(ctx context.Context, c tool.Call, up func(tool.Result)) (tool.Result, error)) *fnTool {
	return &fnTool{spec: events.ToolSpec{Name: name, Description: name, Parameters: json.RawMessage(`{"type":"object"}`)}, run: run}
}

func textTool(name, out string) *fnTool {
	return newTool(name, func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
		return tool.Text(out), nil
	})
}

// recorder keeps every event and a short form of each.
type recorder struct {
	mu     sync.Mutex
	events []events.Event
}

func (r *recorder) sink(ev events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

// short renders events as "type[:detail]" lines for order assertions;
// message_update is left out.
func (r *recorder) short() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		switch ev.Type {
		case events.EvMessageUpdate:
			continue
		case events.EvMessageStart, events.EvMessageEnd:
			d := ev.Message.Role
			if ev.Message.Role == events.RoleToolResult {
				d += ":" + ev.Message.ToolCallID
			}
			if ev.Message.Role == events.RoleAssistant && ev.Type == events.EvMessageEnd {
				d += ":" + string(ev.Message.StopReason)
			}
			out = append(out, ev.Type+":"+d)
		case events.EvToolExecutionStart, events.EvToolExecutionEnd, events.EvToolExecutionUpdate:
			out = append(out, ev.Type+":"+ev.ToolCallID)
		case events.EvTurnEnd:
			ids := make([]string, len(ev.ToolResults))
			for i, m := range ev.ToolResults {
				ids[i] = m.ToolCallID
			}
			out = append(out, ev.Type+":["+strings.Join(ids, ",")+"]")
		default:
			out = append(out, ev.Type)
		}
	}
	return out
}

func (r *recorder) of(typ string) []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []events.Event
	for _, ev := range r.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func script(t testing.TB, s string) *scripted.Provider {
	t.Helper()
	sc, err := scripted.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return scripted.New(sc)
}

func user(s string) events.Message {
	return events.Message{Role: events.RoleUser, Content: events.TextContent(s)}
}

func config(p *scripted.Provider, rec *recorder) *agent.Config {
	return &agent.Config{Provider: p, Model: p.Model("test"), Sink: rec.sink}
}

func assertSeq(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", fmtSeq(got), fmtSeq(want))
	}
}

func fmtSeq(s []string) string {
	var b strings.Builder
	for i, x := range s {
		fmt.Fprintf(&b, "  %2d %s\n", i, x)
	}
	return b.String()
}

func resultText(m events.Message) string { return m.Content.Text() }
