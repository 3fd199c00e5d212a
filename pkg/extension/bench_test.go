package extension_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/extension"
)

// BenchmarkRemoteHook measures what one remote tool_call handler adds to
// a tool call: the request to the extension over NATS (TCP, one embedded
// server), its answer, and the reduction. It reports p50 and p99.
func BenchmarkRemoteHook(b *testing.B) {
	p := startB(b)
	ctx := context.Background()
	if err := extension.Handle(ctx, p.x, extension.Handler{Name: "bench"}, func(_ context.Context, c extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
		return hook.ToolCallResult{Block: c.Event.ToolName == "rm"}, nil
	}); err != nil {
		b.Fatal(err)
	}
	p.waitHandlersB(b, "bench")
	r, _ := p.session("default", "s1")
	ev := bash("ls")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if block, reason, _ := hook.ToolCall(ctx, r, ev); block {
			b.Fatal(reason)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
