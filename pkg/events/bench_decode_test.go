package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Benchmarks of the strict decoders on the shapes a session log is made of:
// a large assistant message (thinking, text with escapes and non-ASCII,
// several tool calls with nested arguments), a large tool result, and a small
// user prompt.

func benchLargeAssistant() Entry {
	var thinking strings.Builder
	for i := range 30 {
		fmt.Fprintf(&thinking, "Step %d: the test in pkg/events fails because \"decode\" rejects the input —\n", i)
	}
	oldText := "func f() {\n\treturn \"a\"\n}\n"
	calls := []Block{
		{Type: BlockThinking, Thinking: thinking.String(), ThinkingSignature: strings.Repeat("EqQBCkYIBxgCKkB0", 16)},
		TextBlock("I'll read the file, then edit it. Überprüfen: 文件 \"entry.go\".\nThen run the tests."),
	}
	for i := range 3 {
		args, _ := json.Marshal(map[string]any{
			"path":  fmt.Sprintf("pkg/events/file%d.go", i),
			"edits": []map[string]any{{"oldText": oldText, "newText": strings.Repeat(oldText, 3)}, {"oldText": "x", "newText": "y"}},
			"opts":  map[string]any{"dryRun": false, "context": 3, "nested": map[string]any{"a": []int{1, 2, 3}}},
		})
		calls = append(calls, Block{Type: BlockToolCall, ID: fmt.Sprintf("toolu_01A2b3C4d5%d", i), Name: "edit", Arguments: args})
	}
	e := exampleEntry(EntryMessage)
	e.Message = &Message{Role: RoleAssistant, Content: Content{Blocks: calls}, API: "anthropic-messages",
		Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: StopToolUse, ResponseID: "msg_01XyZ",
		Usage:     &Usage{Input: 12000, Output: 3400, CacheRead: 8000, CacheWrite: 640, TotalTokens: 24040, Cost: Cost{Input: 0.036, Output: 0.051, Total: 0.087}},
		Timestamp: 1772600768000}
	return e
}

func benchToolResult() Entry {
	var out strings.Builder
	for i := range 200 {
		fmt.Fprintf(&out, "%4d\tfunc (e *Entry) decode%d(data []byte) error { return fmt.Errorf(\"bad %%q\", data) }\n", i, i)
	}
	e := exampleEntry(EntryMessage)
	e.Message = &Message{Role: RoleToolResult, ToolCallID: "toolu_01A2b3C4d5", ToolName: "read",
		Content: TextContent(out.String()), Details: json.RawMessage(`{"lines":200,"truncated":false}`), Timestamp: 1772600768500}
	return e
}

func benchSmallUser() Entry {
	e := exampleEntry(EntryMessage)
	e.Message = &Message{Role: RoleUser, Content: Content{Blocks: []Block{TextBlock("hi")}, String: true}, Timestamp: 1772600767089}
	return e
}

func benchDecode(b *testing.B, data []byte, decode func([]byte) error) {
	b.Helper()
	if err := decode(data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if err := decode(data); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}

func decodeEntryErr(b []byte) error { _, err := DecodeEntry(b); return err }

func BenchmarkDecodeEntryShapes(b *testing.B) {
	for _, c := range []struct {
		name string
		e    Entry
	}{{"golden-assistant", Entry{}}, {"large-assistant", benchLargeAssistant()}, {"tool-result", benchToolResult()}, {"small-user", benchSmallUser()}} {
		data, err := c.e.MarshalJSON()
		if c.e.Type == "" { // BenchmarkDecodeEntry's input
			data, err = os.ReadFile(filepath.Join(goldenDir, "entry", "message-assistant.json"))
			data = bytes.TrimSpace(data)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) { benchDecode(b, data, decodeEntryErr) })
	}
}

func BenchmarkDecodeOthers(b *testing.B) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			b.Fatal(err)
		}
		return bytes.TrimSpace(data)
	}
	b.Run("event-message_update", func(b *testing.B) {
		benchDecode(b, read("event/message_update.json"), func(d []byte) error { _, err := DecodeEvent(d); return err })
	})
	b.Run("event-agent_start", func(b *testing.B) {
		benchDecode(b, read("event/agent_start.json"), func(d []byte) error { _, err := DecodeEvent(d); return err })
	})
	b.Run("command-prompt", func(b *testing.B) {
		benchDecode(b, read("command/prompt.json"), func(d []byte) error { _, err := DecodeCommand(d); return err })
	})
	b.Run("toolcall", func(b *testing.B) {
		benchDecode(b, read("toolcall.json"), func(d []byte) error { _, err := DecodeToolCall(d); return err })
	})
	b.Run("toolresult", func(b *testing.B) {
		benchDecode(b, read("toolresult.json"), func(d []byte) error { _, err := DecodeToolResult(d); return err })
	})
	b.Run("message-assistant", func(b *testing.B) {
		benchDecode(b, read("message/assistant.json"), func(d []byte) error { var m Message; return json.Unmarshal(d, &m) })
	})
}
