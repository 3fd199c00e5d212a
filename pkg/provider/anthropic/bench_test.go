package anthropic

import (
	"testing"

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
	ssetest.Bench(b, newProvider(b, srv.URL), request(b))
}
