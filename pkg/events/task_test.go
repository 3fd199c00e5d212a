package events

import (
	"strings"
	"testing"
)

func TestChildSessionIDIsDeterministicAndValid(t *testing.T) {
	a, b := ChildSessionID("p1", "k1"), ChildSessionID("p1", "k1")
	if a != b || a == ChildSessionID("p1", "k2") || a == ChildSessionID("p2", "k1") {
		t.Fatalf("child ids %s %s: want the same for the same parent and call, else different", a, b)
	}
	if err := ValidateSessionID(a); err != nil || !IsChildSessionID(a) {
		t.Fatalf("child id %s: %v", a, err)
	}
	for _, kind := range []string{"create", "prompt", "abort", "result"} {
		id := TaskCommandID(kind, a, strings.Repeat("x", 200))
		if err := validateID("id", "command id", id); err != nil || !IsTaskCommandID(id) {
			t.Errorf("%s command id %s: %v", kind, id, err)
		}
	}
}

// Refused sub-agent commands and entries name the field.
func TestSubagentFieldsAreChecked(t *testing.T) {
	for in, field := range map[string]string{
		`{"id":"c","type":"task_result","toolCallId":"k1"}`:                                        "childSessionId",
		`{"id":"c","type":"task_result","childSessionId":"sub-1"}`:                                 "toolCallId",
		`{"id":"c","type":"task_result","toolCallId":"k1","childSessionId":"a b"}`:                 "childSessionId",
		`{"id":"c","type":"create","parentSession":"p1","parentToolCallId":"k1"}`:                  "taskDepth",
		`{"id":"c","type":"create","parentToolCallId":"k1","taskDepth":1}`:                         "parentSession",
		`{"id":"c","type":"create","parentSession":"p1","parentToolCallId":"k1","taskDepth":17}`:   "taskDepth",
		`{"id":"c","type":"create","parentSession":"p1","parentToolCallId":"a b c","taskDepth":1}`: "parentToolCallId",
	} {
		_, err := DecodeCommand([]byte(in))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", in, err, field)
		}
	}
	for in, field := range map[string]string{
		`{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","taskDepth":99,"parentSession":"p"}`:                                                             "taskDepth",
		`{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","parentToolCallId":"k1"}`:                                                                        "parentSession",
		`{"type":"task_started","id":"e","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","toolCallId":"k1","toolName":"task","arguments":{}}`:                        "childSessionId",
		`{"type":"task_started","id":"e","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","toolCallId":"k1","toolName":"task","arguments":{},"childSessionId":"a/b"}`: "childSessionId",
	} {
		_, err := DecodeEntry([]byte(in))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", in, err, field)
		}
	}
}
