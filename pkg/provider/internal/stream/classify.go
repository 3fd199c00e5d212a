package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-agents/cairn/pkg/llm"
)

// HTTPError classifies an error response with [llm.Classify]: status, the
// provider's error code or type (may be empty) and message, and the response
// headers (for Retry-After; may be nil). The wording is matched on the whole
// message, before it is clipped.
func HTTPError(status int, code, msg string, header http.Header, cause error) *llm.Error {
	msg = strings.TrimSpace(msg)
	e := &llm.Error{Kind: llm.Classify(status, code, msg), Status: status, Message: clip(msg), Err: cause}
	if e.Message == "" && code != "" {
		e.Message = code
	}
	if e.Kind == llm.KindRetryable {
		e.RetryAfter = RetryAfter(header, time.Now())
	}
	return e
}

// maxMessage bounds an error message kept from a response: a proxy's HTML
// page does not belong in the log whole.
const maxMessage = 1000

func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// Transport classifies a failure to reach the provider or to read its
// stream: aborted when ctx is done, retryable otherwise (a cut connection, a
// reset, a timeout, an event that does not parse).
func Transport(ctx context.Context, what string, err error) *llm.Error {
	if ctx.Err() != nil {
		return Aborted(ctx)
	}
	msg := what
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		msg += ": malformed event"
	}
	if err != nil {
		msg += ": " + err.Error()
	}
	return &llm.Error{Kind: llm.KindRetryable, Message: msg, Err: err}
}

// Aborted is the error of a call whose ctx was cancelled.
func Aborted(ctx context.Context) *llm.Error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = context.Canceled
	}
	return &llm.Error{Kind: llm.KindAborted, Message: "the request was aborted", Err: cause}
}

// Truncated is the error of a stream that ended without its final event.
func Truncated(ctx context.Context, last string) *llm.Error {
	if ctx.Err() != nil {
		return Aborted(ctx)
	}
	return &llm.Error{Kind: llm.KindRetryable, Message: "the stream ended before " + last, Err: io.ErrUnexpectedEOF}
}

// Invalid is the error of a request Cairn refuses to send (bad tool schema,
// bad image...).
func Invalid(format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.KindInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// RetryAfter reads how long the provider asked to wait: retry-after-ms
// (OpenAI), Retry-After in seconds or as an HTTP date, else 0.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
