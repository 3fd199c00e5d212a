package telemetrytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeLLM is an OpenAI-compatible Chat Completions endpoint that streams a
// call of the ls tool to a user message and a short text to a tool result.
// It refuses requests without the expected API key.
type fakeLLM struct {
	srv   *httptest.Server
	key   string
	calls atomic.Int64
}

func newFakeLLM(t testing.TB, key string) *fakeLLM {
	f := &fakeLLM{key: key}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.key {
		http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
		return
	}
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.calls.Add(1)
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		// A failed write fails the provider's request, which the test sees.
		_, _ = fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, fin)
	}
	if req.Messages[len(req.Messages)-1].Role == "tool" {
		chunk(`{"role":"assistant","content":"I see the files."}`, "")
		chunk(`{}`, "stop")
	} else {
		chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]}`, "")
		chunk(`{}`, "tool_calls")
	}
	_, _ = fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":15,\"total_tokens\":135}}\n\n")
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
}
