package events

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// Invalid JSON anywhere in the input, even inside members Cairn keeps
// without looking at them (Extra, details, tool call arguments), is refused
// as a whole, with the offset of the problem.
func TestInvalidJSONInsideIsRefused(t *testing.T) {
	valid := `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-04T05:06:07.089Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"ls","arguments":{"p":1}}],"stopReason":"toolUse","details":{"k":[1]}},"future":{"x":"y"}}`
	if _, err := DecodeEntry([]byte(valid)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ from, to, want string }{
		{`"future":{"x":"y"}`, `"future":{"x":y}`, "invalid JSON at offset 244: want a value, got 'y'"},                                     // in an unknown member
		{`"details":{"k":[1]}`, `"details":{"k":[1,]}`, "invalid JSON at offset 227: want a value, got ']'"},                                // in a kept raw value
		{`"arguments":{"p":1}`, `"arguments":{"p":01}`, "invalid JSON at offset 182: want ',' or '}', got '1'"},                             // in tool call arguments
		{`"id":"t"`, `"id":"t` + "\x01" + `"`, "invalid JSON at offset 150: control character U+0001 in a string (write it escaped)"},       // a control character
		{`{"p":1}`, `{"p":"\q"}`, `invalid JSON at offset 182: invalid escape in a string: \ followed by 'q'`},                              // a bad escape
		{`"stopReason":"toolUse"`, `"stopReason":"toolUse",`, "invalid JSON at offset 209: want a string (a member's key), got ','"},        // a doubled comma
		{`"future":{"x":"y"}}`, `"future":{"x":"y"}`, "invalid JSON at offset 248: want ',' or '}', got the end of the input"},              // cut short
		{`"future":{"x":"y"}}`, `"future":{"x":"y"}} {}`, "invalid JSON at offset 250: want the end of the input after the value, got '{'"}, // two values
	} {
		in := strings.Replace(valid, bad.from, bad.to, 1)
		_, err := DecodeEntry([]byte(in))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "" || fe.Problem != bad.want {
			t.Errorf("%s: error %v, want %q", bad.to, err, bad.want)
		}
	}
}

// Decoded values share no memory with the input: overwriting the buffer
// after decoding changes nothing (callers reuse NATS message buffers).
func TestDecodedValuesDoNotAliasInput(t *testing.T) {
	inputs := map[string]string{
		"entry":      `{"type":"message","id":"a1","parentId":"p0","timestamp":"2026-03-04T05:06:07.089Z","commandId":"c1","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"s"},{"type":"text","text":"caf\u00e9 \"q\""},{"type":"toolCall","id":"t","name":"ls","arguments":{ "p" : [1, "x"] }}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.1,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.1,"cur":"EUR"},"more":[1]},"stopReason":"toolUse","timestamp":5,"zz":{"a":"b"}},"k\u00e9y":"v","top":[true,null]}`,
		"message":    `{"role":"toolResult","toolCallId":"t","toolName":"ls","content":[{"type":"text","text":"a\nb"}],"details":{"n":1},"isError":false,"x":"y"}`,
		"block":      `{"type":"toolCall","id":"t","name":"ls","arguments":{"p":"x"},"thoughtSignature":"g","x":[1]}`,
		"content":    `[{"type":"text","text":"one"},{"type":"image","data":"AA==","mimeType":"image/png"}]`,
		"usage":      `{"input":1,"output":2,"cost":{"total":0.5,"x":"y"},"z":"w"}`,
		"cost":       `{"input":0.25,"total":0.5,"x":"y"}`,
		"command":    `{"v":1,"id":"c1","type":"prompt","sessionId":"s1","text":"hi there","images":[{"data":"AA==","mimeType":"image/png"}],"extra":{"a":1}}`,
		"event":      `{"v":1,"type":"turn_end","sessionId":"s1","message":{"role":"assistant","content":"ok","stopReason":"stop"},"toolResults":[{"role":"toolResult","toolCallId":"t","toolName":"ls","content":"a"}]}`,
		"toolcall":   `{"v":1,"sessionId":"s1","toolCallId":"t1","name":"bash","arguments":{"command":"ls -la"},"idempotent":false,"owner":"o1"}`,
		"toolresult": `{"v":1,"kind":"tool","sessionId":"s1","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"ok"}],"details":{"exit":0},"isError":false,"durationMs":3}`,
		"pi": `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-04T05:06:07.089Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-04T05:06:07.089Z","message":{"role":"user","content":"hi"}}`,
	}
	for _, d := range codecs() {
		in, ok := inputs[d.name]
		if !ok {
			if d.name == "event-message" || d.name == "toolresult-block" {
				continue // the message and block decoders again
			}
			t.Fatalf("no input for %s", d.name)
		}
		buf := []byte(in)
		v, err := d.decode(buf)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		want, err := d.encode(v)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		for i := range buf {
			buf[i] = 'x'
		}
		if got, _ := d.encode(v); !bytes.Equal(got, want) {
			t.Errorf("%s: the decoded value changed when the input was overwritten:\n got %s\nwant %s", d.name, got, want)
		}
	}
}

// isTimeFormat accepts only what time.Parse accepts, and accepts the
// timestamps Cairn writes.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{"2026-03-04T05:06:07.089Z", "2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00.000Z",
		"1900-02-29T00:00:00.000Z", "2000-02-29T00:00:00.000Z", "2026-04-31T00:00:00.000Z", "2026-13-01T00:00:00.000Z",
		"2026-00-01T00:00:00.000Z", "2026-01-00T00:00:00.000Z", "2026-01-01T24:00:00.000Z", "2026-01-01T00:60:00.000Z",
		"2026-01-01T00:00:60.000Z", "0000-01-01T00:00:00.000Z", "2026-01-01t00:00:00.000Z", "2026-01-01T00:00:00.000+00:00", "yesterday"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := time.Parse(time.RFC3339Nano, s)
		if isTimeFormat(s) && err != nil {
			t.Fatalf("isTimeFormat(%q) but time.Parse: %v", s, err)
		}
		if validTimestamp(s) != (err == nil) {
			t.Fatalf("validTimestamp(%q) = %v, time.Parse: %v", s, validTimestamp(s), err)
		}
	})
}

func TestTimeFormatAcceptsWhatCairnWrites(t *testing.T) {
	for ts := time.Date(1999, 12, 31, 23, 59, 59, 999e6, time.UTC); ts.Year() < 2102; ts = ts.Add(61*time.Hour + 7*time.Minute + 13*time.Second + 1e6) {
		if s := FormatTime(ts); !isTimeFormat(s) {
			t.Fatalf("isTimeFormat(%q) = false", s)
		}
	}
}
