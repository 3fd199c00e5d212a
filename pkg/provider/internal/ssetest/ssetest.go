// Package ssetest replays recorded server-sent-event transcripts from an
// httptest server, for the provider tests: whole streams, error statuses,
// a connection cut mid-stream, and a stream that hangs after its first part
// until the client goes away (for aborts). [Run], [RunAbort] and [Bench] drive
// a provider through them; [Text], [Think], [Args] and [Call] build what the
// cases expect.
//
// # Concurrency
//
// Handlers run on the server's goroutines; [Server] records each request
// under a lock and closes everything at test cleanup.
package ssetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Reply is what the server answers to one request.
type Reply struct {
	Status int               // default 200
	Header map[string]string // extra headers
	// Body is sent as is. For 200 replies it is an SSE transcript written
	// with "\n" line ends.
	Body string
	// Cut closes the connection after Body without finishing the response
	// (no final chunk): the client sees the body end unexpectedly.
	Cut bool
	// Hang keeps the response open after Body until the client goes away.
	Hang bool
}

// Request is what the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Server serves one Reply to every request and records the requests.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
	done     chan struct{}
}

// Serve starts a server answering with reply; it is closed at cleanup.
func Serve(t testing.TB, reply Reply) *Server {
	t.Helper()
	s := &Server{done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		s.requests = append(s.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
		s.mu.Unlock()
		for k, v := range reply.Header {
			w.Header().Set(k, v)
		}
		status := reply.Status
		if status == 0 {
			status = http.StatusOK
			if w.Header().Get("Content-Type") == "" {
				w.Header().Set("Content-Type", "text/event-stream")
			}
		} else if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
		w.(http.Flusher).Flush()
		switch {
		case reply.Cut:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		case reply.Hang:
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
		}
	}))
	t.Cleanup(func() {
		close(s.done)
		s.Close()
	})
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Last returns the last request, failing the test if there was none.
func (s *Server) Last(t testing.TB) Request {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("the server received no request")
	}
	return reqs[len(reqs)-1]
}

// SSE builds a transcript from (event, data) pairs; an empty event name
// writes a data-only event.
func SSE(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] != "" {
			b.WriteString("event: " + pairs[i] + "\n")
		}
		b.WriteString("data: " + pairs[i+1] + "\n\n")
	}
	return b.String()
}

// Data builds a data-only transcript (Chat Completions style).
func Data(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

// Deltas collects deltas.
type Deltas struct{ List []events.Delta }

// Add records d.
func (d *Deltas) Add(x events.Delta) { d.List = append(d.List, x) }

// AssertDeltas fails unless got equals want exactly.
func AssertDeltas(t testing.TB, got, want []events.Delta) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d deltas, want %d:\n got %s\nwant %s", len(got), len(want), js(got), js(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("delta %d = %s, want %s\n all: %s", i, js(got[i]), js(want[i]), js(got))
		}
	}
}

// AssertMessage compares the canonical JSON of got and want, ignoring the
// timestamp (which must be set).
func AssertMessage(t testing.TB, got, want events.Message) {
	t.Helper()
	if got.Timestamp == 0 {
		t.Errorf("message has no timestamp")
	}
	got.Timestamp, want.Timestamp = 0, 0
	g, w := js(got), js(want)
	if g != w {
		t.Fatalf("message:\n got %s\nwant %s", g, w)
	}
}

// AssertNoSecret fails if secret occurs in any of texts.
func AssertNoSecret(t testing.TB, secret string, texts ...string) {
	t.Helper()
	for i, s := range texts {
		if strings.Contains(s, secret) {
			t.Errorf("the secret appears in text %d: %s", i, s)
		}
	}
}

func js(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// JSON is the compact JSON of v, for building expectations.
func JSON(v any) string { return js(v) }

// Text is a text delta of content block i.
func Text(i int, s string) events.Delta {
	return events.Delta{Kind: events.DeltaText, ContentIndex: i, Delta: s}
}

// Think is a thinking delta of content block i.
func Think(i int, s string) events.Delta {
	return events.Delta{Kind: events.DeltaThinking, ContentIndex: i, Delta: s}
}

// Args is a tool-call arguments delta of content block i, call id and tool name.
func Args(i int, id, name, s string) events.Delta {
	return events.Delta{Kind: events.DeltaToolCall, ContentIndex: i, Delta: s, ToolCallID: id, ToolName: name}
}

// Call is a tool-call block with arguments a.
func Call(id, name, a string) events.Block {
	return events.Block{Type: events.BlockToolCall, ID: id, Name: name, Arguments: json.RawMessage(a)}
}
