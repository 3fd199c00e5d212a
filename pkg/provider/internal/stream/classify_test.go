package stream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-agents/cairn/pkg/llm"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"retry-after-ms": "250", "Retry-After": "7"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{nil, 0},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := RetryAfter(h, now); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

// TestHTTPErrorClassifies checks that error responses go through the one
// classifier (llm.Classify, whose own table has every rule) and keep their
// status and retry-after.
func TestHTTPErrorClassifies(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "3")
	for _, tc := range []struct {
		status    int
		code, msg string
		want      llm.Kind
	}{
		{400, "invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum", llm.KindContextOverflow},
		{413, "", "", llm.KindContextOverflow},
		{429, "rate_limit_exceeded", "Rate limit reached: tokens per min", llm.KindRetryable},
		{429, "insufficient_quota", "You exceeded your current quota", llm.KindQuota},
		{400, "", "network_error: Network connection lost.", llm.KindRetryable},
		{400, "", "messages: roles must alternate", llm.KindInvalidRequest},
	} {
		e := HTTPError(tc.status, tc.code, tc.msg, h, nil)
		if e.Kind != tc.want || e.Status != tc.status {
			t.Errorf("HTTPError(%d, %q, %q) = %v (status %d), want %v", tc.status, tc.code, tc.msg, e.Kind, e.Status, tc.want)
		}
		if (e.Kind == llm.KindRetryable) != (e.RetryAfter == 3*time.Second) {
			t.Errorf("HTTPError(%d, %q): retry-after %v for kind %v", tc.status, tc.msg, e.RetryAfter, e.Kind)
		}
	}
}

func TestTransportAndAbort(t *testing.T) {
	if e := Transport(context.Background(), "x", io.ErrUnexpectedEOF); e.Kind != llm.KindRetryable || !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Errorf("cut stream = %v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e := Transport(ctx, "x", io.ErrUnexpectedEOF); !errors.Is(e, llm.ErrAborted) || !errors.Is(e, context.Canceled) {
		t.Errorf("cancelled = %v", e)
	}
	if e := Truncated(ctx, "message_stop"); e.Kind != llm.KindAborted {
		t.Errorf("truncated after cancel = %v", e)
	}
}

func TestObjectArgs(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1}`: `{"a": 1}`, ` {"a":1} `: `{"a":1}`, ``: `{}`, `{"a":`: `{}`, `[1]`: `{}`, `"x"`: `{}`,
	} {
		if got := string(ObjectArgs([]byte(in))); got != want {
			t.Errorf("ObjectArgs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLongMessagesAreClipped(t *testing.T) {
	long := strings.Repeat("é", 2000) // 4000 bytes
	e := HTTPError(502, "", long, nil, nil)
	if len(e.Message) > maxMessage+40 || !strings.HasSuffix(e.Message, "(4000 bytes)") || !utf8.ValidString(e.Message) {
		t.Fatalf("clipped message: %d bytes, %q...", len(e.Message), e.Message[len(e.Message)-20:])
	}
	// Overflow wording is matched on the whole message, before clipping.
	if e := HTTPError(400, "", strings.Repeat("x", 5000)+" prompt is too long", nil, nil); e.Kind != llm.KindContextOverflow {
		t.Fatalf("kind = %v", e.Kind)
	}
}
