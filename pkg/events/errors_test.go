package events

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Errors are worded by Cairn, in the format of the package doc (# Errors):
// the field's path, a colon, what it must be and what it got; invalid JSON
// with the offset of the first byte that cannot be there.
func TestErrorTexts(t *testing.T) {
	entry := func(patch string) []byte { return []byte(entryJSON(patch)) }
	session := func(patch string) []byte {
		return []byte(patchJSON(`{"type":"session","version":3,"id":"s1","timestamp":"2026-03-04T05:06:07.089Z"}`, patch))
	}
	cmd := func(patch string) []byte {
		return []byte(patchJSON(`{"v":1,"id":"c1","type":"prompt","sessionId":"s1","text":"hi"}`, patch))
	}
	ev := func(patch string) []byte {
		return []byte(patchJSON(`{"v":1,"type":"agent_start","sessionId":"s1"}`, patch))
	}
	tc := func(patch string) []byte {
		return []byte(patchJSON(`{"v":1,"sessionId":"s1","toolCallId":"t1","name":"bash","arguments":{},"idempotent":false}`, patch))
	}
	tr := func(patch string) []byte {
		return []byte(patchJSON(`{"v":1,"kind":"tool","sessionId":"s1","toolCallId":"t1","toolName":"bash","content":[],"isError":false,"durationMs":3}`, patch))
	}
	decodeEntry := func(b []byte) error { _, err := DecodeEntry(b); return err }
	decodeCommand := func(b []byte) error { _, err := DecodeCommand(b); return err }
	decodeEvent := func(b []byte) error { _, err := DecodeEvent(b); return err }
	for _, c := range []struct {
		name   string
		decode func([]byte) error
		in     []byte
		want   string
	}{
		{"entry not an object", decodeEntry, []byte(`[1]`), "must be a JSON object, got an array"},
		{"entry null", decodeEntry, []byte(`null`), "must be a JSON object, got null"},
		{"entry cut short", decodeEntry, []byte(`{"type":`), "invalid JSON at offset 8: want a value, got the end of the input"},
		{"entry with a trailing comma", decodeEntry, []byte(`{"type":"leaf",}`), "invalid JSON at offset 15: want a string (a member's key), got '}'"},
		{"message not an object", decodeEntry, entry(`{"message":"hi"}`), "message: must be a JSON object, got a string"},
		{"entry principal with a space", decodeEntry, entry(`{"principal":"key:a b"}`), "principal: has a character that is not printable ASCII (or a space) at 5"},
		{"command principal with a newline", decodeCommand, cmd(`{"principal":"oidc:a\nb"}`), "principal: has a character that is not printable ASCII (or a space) at 6"},
		{"content a number", decodeEntry, entry(`{"message":{"role":"user","content":5}}`), "message.content: must be a string or an array of content blocks, got a number"},
		{"usage count a string", decodeEntry, entry(`{"message":{"role":"assistant","content":[],"stopReason":"stop","usage":{"input":"many"}}}`), "message.usage.input: must be an integer, got a string"},
		{"usage count fractional", decodeEntry, entry(`{"message":{"role":"assistant","content":[],"stopReason":"stop","usage":{"input":1.5}}}`), "message.usage.input: must be an integer, got 1.5"},
		{"usage count too large", decodeEntry, entry(`{"message":{"role":"assistant","content":[],"stopReason":"stop","usage":{"input":1e19}}}`), "message.usage.input: must be an integer between -9223372036854775808 and 9223372036854775807, got 1e19"},
		{"cost a string", decodeEntry, entry(`{"message":{"role":"assistant","content":[],"stopReason":"stop","usage":{"cost":{"total":"$1"}}}}`), "message.usage.cost.total: must be a number, got a string"},
		{"cost too large", decodeEntry, entry(`{"message":{"role":"assistant","content":[],"stopReason":"stop","usage":{"cost":{"total":1e400}}}}`), "message.usage.cost.total: must be a number between -1.8e308 and 1.8e308, got 1e400"},
		{"block not an object", decodeEntry, entry(`{"message":{"role":"user","content":["hi"]}}`), "message.content[0]: must be a JSON object, got a string"},
		{"session tools not strings", decodeEntry, session(`{"tools":["read",7]}`), "tools[1]: must be a string, got a number"},
		{"session labels not strings", decodeEntry, session(`{"labels":{"a":1}}`), "labels: must be an object of strings"},
		{"command v a string", decodeCommand, cmd(`{"v":"1"}`), "v: must be an integer, got a string"},
		{"command text a number", decodeCommand, cmd(`{"text":5}`), "text: must be a string, got a number"},
		{"command images not an array", decodeCommand, cmd(`{"images":"a.png"}`), "images: must be an array, got a string"},
		{"command image data a number", decodeCommand, cmd(`{"images":[{"data":"AA==","mimeType":"image/png"},{"data":5}]}`), "images[1].data: must be a string, got a number"},
		{"command tools not strings", decodeCommand, cmd(`{"type":"set_tools","tools":["read",{}]}`), "tools[1]: must be a string, got an object"},
		{"command entryId a number", decodeCommand, cmd(`{"type":"navigate","entryId":5}`), "entryId: must be a string, got a number"},
		{"event seq negative", decodeEvent, ev(`{"seq":-1}`), "seq: must be an integer between 0 and 18446744073709551615, got -1"},
		{"event seq fractional", decodeEvent, ev(`{"seq":1.5}`), "seq: must be an integer, got 1.5"},
		{"event delta index a string", decodeEvent, ev(`{"type":"message_update","delta":{"kind":"text","contentIndex":"0","delta":""}}`), "delta.contentIndex: must be an integer, got a string"},
		{"event queue not strings", decodeEvent, ev(`{"type":"queue_update","queue":{"steering":["a"],"followUp":[true]}}`), "queue.followUp[0]: must be a string, got a boolean"},
		{"event message bad block", decodeEvent, ev(`{"type":"message_end","message":{"role":"user","content":[{"type":"x"}]}}`), `message.content[0].type: unknown content block type "x" (want text, image, thinking or toolCall)`},
		{"tool call idempotent a string", func(b []byte) error { _, err := DecodeToolCall(b); return err }, tc(`{"idempotent":"yes"}`), "idempotent: must be a boolean, got a string"},
		{"tool result duration fractional", func(b []byte) error { _, err := DecodeToolResult(b); return err }, tr(`{"durationMs":1.5}`), "durationMs: must be an integer, got 1.5"},
		{"message via UnmarshalJSON", func(b []byte) error { var m Message; return m.UnmarshalJSON(b) }, []byte(`{"role":"user","content":"x"`), "invalid JSON at offset 28: want ',' or '}', got the end of the input"},
		{"content via UnmarshalJSON", func(b []byte) error { var c Content; return c.UnmarshalJSON(b) }, []byte(`"a\qb"`), `invalid JSON at offset 2: invalid escape in a string: \ followed by 'q'`},
		{"pi line", func(b []byte) error { _, _, err := ReadPiFile(strings.NewReader(string(b))); return err },
			[]byte(string(session(`{}`)) + "\n\n{not json}\n"), "line 3: invalid JSON at offset 1: want a string (a member's key), got 'n'"},
	} {
		if err := c.decode(c.in); err == nil || err.Error() != c.want {
			t.Errorf("%s: %s\n got %v\nwant %s", c.name, c.in, err, c.want)
		}
	}
}

// Encoders refuse what JSON cannot hold, in Cairn's words too.
func TestEncodeErrorTexts(t *testing.T) {
	for _, c := range []struct {
		name   string
		encode func() ([]byte, error)
		want   string
	}{
		{"cost NaN", Cost{Total: math.NaN()}.MarshalJSON, "total: NaN cannot be written in JSON, which has no NaN or infinities"},
		{"cost infinite", Usage{Cost: Cost{Input: math.Inf(-1)}}.MarshalJSON, "input: -Inf cannot be written in JSON, which has no NaN or infinities"},
		{"tool call arguments invalid", ToolCall{Arguments: json.RawMessage(`{"a":`)}.Encode,
			`arguments: a raw value must be valid JSON, got "{\"a\":" (invalid JSON at offset 5: want a value, got the end of the input)`},
	} {
		if _, err := c.encode(); err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}
