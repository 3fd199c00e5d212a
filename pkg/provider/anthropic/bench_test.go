package anthropic

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/internal/ssetest"
)

// BenchmarkStream replays a 1000-delta text stream from an httptest server:
// the cost of parsing, assembling and reporting, HTTP included.
func BenchmarkStream(b *testing.B) {
	pairs := []string{"message_start", start, "content_block_start", textStart}
	for range 1000 {
		pairs = append(pairs, "content_block_delta", textDelta(0, "token "))
	}
	pairs = append(pairs, "message_delta", msgDelta("end_turn", 1000), "message_stop", msgStop)
	srv := ssetest.Serve(b, ssetest.Reply{Body: ssetest.SSE(pairs...)})
	p := newProvider(b, srv.URL)
	req := request(b)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		msg, err := p.Stream(context.Background(), req, func(events.Delta) { n++ })
		if err != nil || len(msg.Content.Blocks) != 1 {
			b.Fatalf("%v %+v", err, msg)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/delta")
}
