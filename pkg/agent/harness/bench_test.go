package harness_test

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// BenchmarkHarnessTurn is BenchmarkTurn (pkg/agent) through the harness:
// every message appended to an in-memory session at its message_end,
// events through the outbox to a sink, save points, queues. One prompt per
// ten turns, each prompt on a new root of the session tree (a navigation
// before the first entry), so the context stays as small as a real one
// instead of growing with b.N.
func BenchmarkHarnessTurn(b *testing.B) {
	const perRun = 10
	noop := func(name string) tool.Tool {
		return newTool(name, func(context.Context, tool.Call) (tool.Result, error) { return tool.Result{}, nil })
	}
	f := newFixture(b, `{"rules":[
		{"reply":{"toolCalls":[{"id":"a","name":"noop1"},{"id":"b","name":"noop2"}]}}]}`,
		harness.Config{Sink: func(events.Event) {}}, noop("noop1"), noop("noop2"))
	turns, stopAt := 0, 0
	off := onNextTurnStop(f.h, func() bool { turns++; return turns >= stopAt })
	defer off()
	b.ReportAllocs()
	b.ResetTimer()
	for turns < b.N {
		stopAt = min(turns+perRun, b.N)
		if _, err := f.h.Navigate(context.Background(), nil, harness.NavigateOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := f.h.Prompt(context.Background(), user("go")); err != nil {
			b.Fatal(err)
		}
	}
}
