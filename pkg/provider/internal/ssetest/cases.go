package ssetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// Case is one replayed stream and what it must produce.
type Case struct {
	Name   string
	Reply  Reply
	Deltas []events.Delta
	Msg    events.Message // the final message (timestamp ignored)
	// Err says the call fails with an *llm.Error of Kind, Status and
	// RetryAfter.
	Err        bool
	Kind       llm.Kind
	Status     int
	RetryAfter time.Duration
}

// Run replays each case against a fresh server and a provider made for its
// URL by newProvider.
func Run(t *testing.T, cases []Case, req func() *llm.Request, newProvider func(t testing.TB, url string) llm.Provider) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			srv := Serve(t, tc.Reply)
			var d Deltas
			msg, err := newProvider(t, srv.URL).Stream(context.Background(), req(), d.Add)
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("the server got %d requests, want 1 (retries belong to the harness, not the SDK)", n)
			}
			AssertDeltas(t, d.List, tc.Deltas)
			AssertMessage(t, msg, tc.Msg)
			if !tc.Err {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %#v, want *llm.Error", err)
			}
			if le.Kind != tc.Kind || le.Status != tc.Status || le.RetryAfter != tc.RetryAfter {
				t.Fatalf("err = kind %v status %d retry %v, want %v %d %v (%v)", le.Kind, le.Status, le.RetryAfter, tc.Kind, tc.Status, tc.RetryAfter, le)
			}
		})
	}
}

// RunAbort streams a reply that hangs after body, cancels ctx at the first
// delta, and returns what Stream returned. The server never ends the stream,
// so Stream returning at all shows that the abort stopped it.
func RunAbort(t *testing.T, body string, req *llm.Request, newProvider func(t testing.TB, url string) llm.Provider) ([]events.Delta, events.Message, error) {
	t.Helper()
	srv := Serve(t, Reply{Hang: true, Body: body})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newProvider(t, srv.URL)
	var d Deltas
	type result struct {
		msg events.Message
		err error
	}
	done := make(chan result, 1)
	go func() {
		msg, err := p.Stream(ctx, req, func(x events.Delta) {
			d.Add(x)
			cancel()
		})
		done <- result{msg, err}
	}()
	r := <-done
	if !errors.Is(r.err, llm.ErrAborted) {
		t.Fatalf("err = %v, want aborted", r.err)
	}
	if r.msg.StopReason != events.StopAborted {
		t.Fatalf("stop reason = %q, want aborted", r.msg.StopReason)
	}
	return d.List, r.msg, r.err
}

// Bench streams req from p for each b.Loop iteration, fails unless each
// stream ends in one content block, and reports the time per delta.
func Bench(b *testing.B, p llm.Provider, req *llm.Request) {
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		msg, err := p.Stream(context.Background(), req, func(events.Delta) { n++ })
		if err != nil || len(msg.Content.Blocks) != 1 {
			b.Fatalf("%v %+v", err, msg)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/delta")
}
