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

func TestOverflowForms(t *testing.T) {
	for _, tc := range []struct {
		status    int
		code, msg string
		want      bool
	}{
		{400, "invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum", true},
		{400, "context_length_exceeded", "anything", true},
		{413, "", "", true},
		{400, "", "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", true},
		{400, "", "the request exceeds the available context size, try increasing it", true},
		{400, "", "Your input exceeds the context window of this model.", true},
		{500, "", "prompt too long; exceeded max context length by 100 tokens", true},
		{400, "", "Input token count (300000) exceeds the maximum number of tokens allowed (200000)", true},
		{400, "", "messages: roles must alternate", false},
		{429, "rate_limit_exceeded", "Rate limit reached: tokens per min", false},
	} {
		if got := IsOverflow(tc.status, tc.code, tc.msg); got != tc.want {
			t.Errorf("IsOverflow(%d, %q, %q) = %v, want %v", tc.status, tc.code, tc.msg, got, tc.want)
		}
	}
	if e := HTTPError(400, "", "prompt is too long", nil, nil); e.Kind != llm.KindContextOverflow {
		t.Errorf("a 400 overflow classified as %v", e.Kind)
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
