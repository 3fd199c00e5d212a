package openai

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/internal/ssetest"
)

// BenchmarkChatStream replays a 1000-delta Chat Completions stream from an
// httptest server: the cost of parsing, assembling and reporting, HTTP
// included.
func BenchmarkChatStream(b *testing.B) {
	chunks := []string{roleChunk}
	for range 1000 {
		chunks = append(chunks, chunk(content("token "), ""))
	}
	chunks = append(chunks, chunk(`{}`, "stop"), usageChunk, "[DONE]")
	srv := ssetest.Serve(b, ssetest.Reply{Body: ssetest.Data(chunks...)})
	p := chatProvider(b, srv.URL)
	req := chatRequest(b)()
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

// BenchmarkResponsesStream is BenchmarkChatStream for the Responses API.
func BenchmarkResponsesStream(b *testing.B) {
	pairs := []string{"response.created", created, "response.output_item.added", msgAdd}
	for range 1000 {
		pairs = append(pairs, "response.output_text.delta", outText(1, "token "))
	}
	pairs = append(pairs, "response.completed", completed("completed", ""))
	srv := ssetest.Serve(b, ssetest.Reply{Body: ssetest.SSE(pairs...)})
	p := respProvider(b, srv.URL)
	req := respRequest(b)()
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
