package oai

import (
	"testing"

	"github.com/cairn-agents/cairn/pkg/llm"
)

func TestErrorBodyShapes(t *testing.T) {
	for _, tc := range []struct {
		body, code, msg string
		status          int
	}{
		{`{"error":{"message":"m","type":"invalid_request_error","param":null,"code":"context_length_exceeded"}}`, "context_length_exceeded", "m", 0},
		{`{"error":{"message":"m","type":"server_error","code":null}}`, "server_error", "m", 0},
		{`{"error":"model not found"}`, "", "model not found", 0},
		{`{"object":"error","message":"m","type":"BadRequestError","param":null,"code":400}`, "BadRequestError", "m", 400},
		{`{"error":{"code":502,"message":"Provider returned error"}}`, "", "Provider returned error", 502},
		{`{"detail":"Not Found"}`, "", "Not Found", 0},
		{`Bad Gateway`, "", "Bad Gateway", 0},
	} {
		code, msg, status := errorBody([]byte(tc.body))
		if code != tc.code || msg != tc.msg || status != tc.status {
			t.Errorf("errorBody(%s) = %q, %q, %d; want %q, %q, %d", tc.body, code, msg, status, tc.code, tc.msg, tc.status)
		}
	}
}

// FuzzErrorBody: any bytes a server may send as an error classify into one
// error of a known kind, without panicking.
func FuzzErrorBody(f *testing.F) {
	for _, s := range []string{`{"error":{"message":"m","code":"c"}}`, `{"error":"x"}`, `{"code":429}`, `<html>`, ``, `{"error":null}`, `{"error":{"code":[1]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := streamError(body)
		if e == nil || e.Kind < llm.KindOther || e.Kind > llm.KindAborted {
			t.Fatalf("streamError(%q) = %v", body, e)
		}
	})
}
