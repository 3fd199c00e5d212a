package openai

import (
	"testing"

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
	ssetest.Bench(b, chatProvider(b, srv.URL), userHi(b, "gpt-4o")())
}

// BenchmarkResponsesStream is BenchmarkChatStream for the Responses API.
func BenchmarkResponsesStream(b *testing.B) {
	pairs := []string{"response.created", created, "response.output_item.added", msgAdd}
	for range 1000 {
		pairs = append(pairs, "response.output_text.delta", outText(1, "token "))
	}
	pairs = append(pairs, "response.completed", completed("completed", ""))
	srv := ssetest.Serve(b, ssetest.Reply{Body: ssetest.SSE(pairs...)})
	ssetest.Bench(b, respProvider(b, srv.URL), userHi(b, "gpt-5")())
}
