package agent_test

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// BenchmarkTurn measures the loop's overhead per turn: one model call to a
// zero-latency scripted provider answering with two tool calls, both run in
// parallel by no-op tools, their results recorded, the save point passed.
// Turns are grouped in runs of ten (agent_start to agent_end, a fresh
// context each), so the figure includes a run's fixed costs spread over its
// turns, as in a real session, and not the cost of one ever-growing run.
func BenchmarkTurn(b *testing.B) {
	const perRun = 10
	p := script(b, `{"rules":[{"reply":{"toolCalls":[{"id":"a","name":"noop1"},{"id":"b","name":"noop2"}]}}]}`)
	noop := func(name string) tool.Tool {
		return newTool(name, func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
			return tool.Result{}, nil
		})
	}
	tools := []tool.Tool{noop("noop1"), noop("noop2")}
	turns, stopAt := 0, 0
	cfg := &agent.Config{
		Provider: p,
		Model:    p.Model("bench"),
		Sink:     func(events.Event) {},
		SavePoint: func(context.Context, agent.Turn) agent.NextTurn {
			turns++
			return agent.NextTurn{Stop: turns >= stopAt}
		},
	}
	prompt := []events.Message{user("go")}
	msgs := make([]events.Message, 0, 4*perRun)
	b.ReportAllocs()
	b.ResetTimer()
	for turns < b.N {
		stopAt = min(turns+perRun, b.N)
		c := &agent.Context{Tools: tools, Messages: msgs[:0]}
		if _, err := agent.Run(context.Background(), cfg, c, prompt); err != nil {
			b.Fatal(err)
		}
	}
}
