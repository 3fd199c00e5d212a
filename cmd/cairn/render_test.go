package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// TestSettlePrintsWhatTheEventsDidNot feeds a renderer some events, then
// settles it from a final message as the log would give it.
func TestSettlePrintsWhatTheEventsDidNot(t *testing.T) {
	text := func(s string) events.Event {
		return events.Event{Type: events.EvMessageUpdate, Delta: &events.Delta{Kind: events.DeltaText, Delta: s}}
	}
	final := func(s string, stop events.StopReason) *events.Message {
		return &events.Message{Role: events.RoleAssistant, Content: events.TextContent(s), StopReason: stop, ErrorMessage: "boom"}
	}
	start := events.Event{Type: events.EvAgentStart}
	msgStart := events.Event{Type: events.EvMessageStart, Message: final("", events.StopEnd)}
	for _, tc := range []struct {
		name  string
		evs   []events.Event
		final *events.Message
		want  string
	}{
		{"nothing seen", nil, final("the answer", events.StopEnd), "the answer\n"},
		{"a prefix seen", []events.Event{start, msgStart, text("the an")}, final("the answer", events.StopEnd), "the answer\n"},
		{"all seen, message_end too", []events.Event{start, msgStart, text("the answer"),
			{Type: events.EvMessageEnd, Message: final("the answer", events.StopEnd)}}, final("the answer", events.StopEnd), "the answer\n"},
		{"an earlier message's text seen", []events.Event{start, msgStart, text("calling"),
			{Type: events.EvMessageEnd, Message: final("calling", events.StopToolUse)}}, final("done", events.StopEnd), "calling\ndone\n"},
		{"an error reply", []events.Event{start}, final("", events.StopError), "[error: boom]\n"},
		{"interrupted", []events.Event{start, msgStart, text("half")}, nil, "half\n[interrupted: the run was cut short and closed by recovery]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			r := &renderer{w: &out}
			for _, ev := range tc.evs {
				if _, err := r.event(ev, "c1"); err != nil {
					t.Fatal(err)
				}
			}
			r.settle(tc.final, tc.final == nil)
			if out.String() != tc.want {
				t.Fatalf("output %q, want %q", out.String(), tc.want)
			}
		})
	}
}

// TestAnErrorReplyDuringARetryDoesNotSettle: the log reads an error reply
// as settled; while the events said the harness retries, the follower waits.
func TestAnErrorReplyDuringARetryDoesNotSettle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/sessions/s1/commands/c1" {
			http.NotFound(w, r)
			return
		}
		if err := json.NewEncoder(w).Encode(map[string]any{"commandId": "c1", "state": "settled",
			"message": events.Message{Role: events.RoleAssistant, StopReason: events.StopError, ErrorMessage: "overloaded"}}); err != nil {
			t.Errorf("fake gateway: %v", err)
		}
	}))
	defer srv.Close()
	cl, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	f := &follower{cl: cl, sid: "s1", cid: "c1", r: &renderer{w: &out}, retrying: true}
	if done, err := f.settled(context.Background()); done || err != nil {
		t.Fatalf("while retrying: done=%v err=%v, want to wait on", done, err)
	}
	f.retrying = false
	if done, err := f.settled(context.Background()); !done || err != nil || out.String() != "[error: overloaded]\n" {
		t.Fatalf("not retrying: done=%v err=%v output %q, want done with the error shown", done, err, out.String())
	}
}
