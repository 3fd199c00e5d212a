package events

import (
	"errors"
	"testing"
)

// CompactJSON puts outside JSON on one line and refuses what is not JSON;
// AppendLine frames a value on one line, copying one that already is.
func TestCompactJSONAndAppendLine(t *testing.T) {
	for in, want := range map[string]string{
		"{\n\t\"a\" : [1, 2],\r\n \"s\": \"x\u2028y\u2029\"\n}": `{"a":[1,2],"s":"x\u2028y\u2029"}`,
		`{"a":1}`:                          `{"a":1}`,
		" 123456789012345678901234567890 ": "123456789012345678901234567890",
	} {
		got, err := CompactJSON([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("CompactJSON(%q) = %s, %v; want %s", in, got, err, want)
		}
		line, err := AppendLine([]byte("x"), []byte(in))
		if err != nil || string(line) != "x"+want+"\n" {
			t.Errorf("AppendLine(%q) = %q, %v", in, line, err)
		}
	}
	for _, bad := range []string{"", "{", "{\"a\":\n}", "\"a\nb\""} {
		if _, err := CompactJSON([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("CompactJSON(%q): %v, want ErrInvalid", bad, err)
		}
	}
	if out, err := AppendLine([]byte("x"), []byte("{\n\"a\"")); err == nil || string(out) != "x" {
		t.Errorf("AppendLine of invalid JSON across lines = %q, %v; want nothing appended and an error", out, err)
	}
}
