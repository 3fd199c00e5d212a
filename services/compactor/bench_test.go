package compactor_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/compaction"
)

// BenchmarkSummaryRoundTrip is one summary request through an in-process
// compactor over embedded NATS with an instant scripted model: the
// protocol's own cost (publish, take, store the result, read it back).
func BenchmarkSummaryRoundTrip(b *testing.B) {
	p := newPlatform(b)
	m, err := newModels([]byte(`{"rules":[{"reply":{"text":"summary"}}]}`))
	if err != nil {
		b.Fatal(err)
	}
	p.startCompactor(b, m, "bench")
	client, err := compactbus.New(p.nc, eventsNames)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		_, err := client.Summarize(ctx, compactbus.Request{SessionID: "bench", RequestID: "r" + strconv.Itoa(i), Model: "scripted/m",
			Job: compaction.Job{Transcript: "[User]: hello"}})
		if err != nil {
			b.Fatal(err)
		}
	}
}
