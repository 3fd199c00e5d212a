package events

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Benchmarks of the encoders on what the orchestrator writes most: live
// events (a message_update carries the whole message so far), log entries
// (a large assistant message, a large tool result) and tool envelopes.

func benchEncode(b *testing.B, encode func() ([]byte, error)) {
	b.Helper()
	data, err := encode()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := encode(); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkEncodeShapes(b *testing.B) {
	golden, err := os.ReadFile(filepath.Join(goldenDir, "event", "message_update.json"))
	if err != nil {
		b.Fatal(err)
	}
	update, err := DecodeEvent(bytes.TrimSpace(golden))
	if err != nil {
		b.Fatal(err)
	}
	large := benchLargeAssistant()
	largeUpdate := update
	largeUpdate.Message = large.Message
	result := benchToolResult()
	toolResult := ToolResult{SessionID: "s-demo", ToolCallID: result.Message.ToolCallID, ToolName: result.Message.ToolName,
		Content: result.Message.Content.Blocks, Details: result.Message.Details, DurationMs: 12, Worker: "w-1"}
	golden, err = os.ReadFile(filepath.Join(goldenDir, "toolcall.json"))
	if err != nil {
		b.Fatal(err)
	}
	call, err := DecodeToolCall(bytes.TrimSpace(golden))
	if err != nil {
		b.Fatal(err)
	}
	small := benchSmallUser()

	b.Run("event-message_update", func(b *testing.B) { benchEncode(b, update.Encode) })
	b.Run("event-message_update-large", func(b *testing.B) { benchEncode(b, largeUpdate.Encode) })
	b.Run("entry-large-assistant", func(b *testing.B) { benchEncode(b, large.MarshalJSON) })
	b.Run("entry-tool-result", func(b *testing.B) { benchEncode(b, result.MarshalJSON) })
	b.Run("entry-small-user", func(b *testing.B) { benchEncode(b, small.MarshalJSON) })
	b.Run("message-large-assistant", func(b *testing.B) { benchEncode(b, large.Message.MarshalJSON) })
	b.Run("toolresult", func(b *testing.B) { benchEncode(b, toolResult.Encode) })
	b.Run("toolcall", func(b *testing.B) { benchEncode(b, call.Encode) })
}
