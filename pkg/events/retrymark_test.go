package events

import (
	"errors"
	"strings"
	"testing"
)

func TestRetryMarkDecoding(t *testing.T) {
	const head = `{"v":1,"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-02T03:04:05.006Z",`
	const errMsg = `"message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"529"}`
	e, err := DecodeEntry([]byte(head + errMsg + `,"retry":{"attempt":2,"delayMs":4000,"code":"transient"}}`))
	if err != nil || e.Retry == nil || *e.Retry != (RetryMark{Attempt: 2, DelayMs: 4000, Code: RetryTransient}) || len(e.Extra) != 0 {
		t.Fatalf("decoded %+v, %v", e.Retry, err)
	}
	const reply = `"message":{"role":"assistant","content":[],"stopReason":"stop"}`
	e, err = DecodeEntry([]byte(head + reply + `,"retry":{"code":"compaction"}}`))
	if err != nil || e.Retry == nil || *e.Retry != (RetryMark{Code: RetryCompaction}) {
		t.Fatalf("compaction mark decoded %+v, %v", e.Retry, err)
	}
	if b, _ := e.MarshalJSON(); !strings.Contains(string(b), `"retry":{"code":"compaction"}`) {
		t.Errorf("compaction mark encoded as %s", b)
	}
	for _, c := range []struct{ body, field string }{
		{errMsg + `,"retry":{"code":"compaction"}}`, "retry"},
		{`"message":{"role":"assistant","content":[],"stopReason":"aborted"},"retry":{"code":"compaction"}}`, "retry"},
		{`"message":{"role":"user","content":"hi"},"retry":{"code":"compaction"}}`, "retry"},
		{reply + `,"retry":{"attempt":1,"code":"compaction"}}`, "retry"},
		{errMsg + `,"retry":{"delayMs":1,"code":"transient"}}`, "retry.attempt"},
		{errMsg + `,"retry":{"attempt":1}}`, "retry.code"},
		{errMsg + `,"retry":"soon"}`, "retry"},
		{`"message":{"role":"user","content":"hi"},"retry":{"attempt":1,"code":"transient"}}`, "retry"},
		{`"message":{"role":"assistant","content":[],"stopReason":"stop"},"retry":{"attempt":1,"code":"transient"}}`, "retry"},
	} {
		_, err := DecodeEntry([]byte(head + c.body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want an error on %s", c.body, err, c.field)
		}
	}
	if _, err := DecodeEntry([]byte(head + `"message":{"role":"user","content":"hi"},"retry":{"attempt":1,"code":"transient"}}`)); !strings.Contains(err.Error(), "stopped with an error") {
		t.Errorf("mark on a user message: %v", err)
	}
}
