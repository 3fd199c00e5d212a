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
// The save point keeps only the last message so the context does not grow
// with b.N.
func BenchmarkTurn(b *testing.B) {
	p := script(b, `{"rules":[{"reply":{"toolCalls":[{"id":"a","name":"noop1"},{"id":"b","name":"noop2"}]}}]}`)
	noop := func(name string) tool.Tool {
		return newTool(name, func(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
			return tool.Result{}, nil
		})
	}
	turns := 0
	cfg := &agent.Config{
		Provider: p,
		Model:    p.Model("bench"),
		Sink:     func(events.Event) {},
		SavePoint: func(_ context.Context, t agent.Turn) agent.NextTurn {
			turns++
			msgs := t.Context.Messages
			msgs[0] = msgs[len(msgs)-1]
			return agent.NextTurn{Stop: turns >= b.N, Messages: msgs[:1]}
		},
	}
	c := &agent.Context{Tools: []tool.Tool{noop("noop1"), noop("noop2")}}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := agent.Run(context.Background(), cfg, c, []events.Message{user("go")}); err != nil {
		b.Fatal(err)
	}
	if turns != b.N {
		b.Fatalf("ran %d turns, want %d", turns, b.N)
	}
}
