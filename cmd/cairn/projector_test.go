package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// publishSession appends a small session (header, prompt, answer) as sid.
func publishSession(t *testing.T, js jetstream.JetStream, sid string, t0 time.Time) uint64 {
	t.Helper()
	ctx := context.Background()
	e1 := "e1"
	entries := []events.Entry{
		{Type: events.EntrySession, Version: 3, ID: sid, Timestamp: events.FormatTime(t0), Model: "scripted/a"},
		{Type: events.EntryMessage, ID: "e1", Timestamp: events.FormatTime(t0.Add(time.Second)),
			Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("hi")}},
		{Type: events.EntryMessage, ID: "e2", ParentID: &e1, Timestamp: events.FormatTime(t0.Add(2 * time.Second)),
			Message: &events.Message{Role: events.RoleAssistant, Content: events.TextContent("hello"), StopReason: events.StopEnd,
				Provider: "scripted", Model: "a", Usage: &events.Usage{Input: 10, Output: 2, TotalTokens: 12}}},
	}
	var last uint64
	for _, e := range entries {
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		ack, err := js.Publish(ctx, events.Names{}.SessionSubject(events.DefaultRef(sid)), b)
		if err != nil {
			t.Fatal(err)
		}
		last = ack.Sequence
	}
	return last
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ln.Close(); err != nil {
			t.Errorf("close ln: %v", err)
		}
	}()
	return ln.Addr().String()
}

func TestProjectorCommands(t *testing.T) {
	srv, _, js := natstest.RunProvisioned(t, events.Names{}, provision.Options{})
	t0 := time.Date(2026, 11, 5, 8, 0, 0, 0, time.UTC)
	publishSession(t, js, "a1", t0)
	last := publishSession(t, js, "b2", t0.Add(time.Minute))

	data, addr := t.TempDir(), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"projector", "--nats", srv.ClientURL(), "--data", data, "--http", addr}, nil, &stdout, &stderr)
	}()
	kittest.Eventually(t, 30*time.Second, "projector caught up", func() error {
		var ready struct {
			Applied    uint64 `json:"applied"`
			LagEntries uint64 `json:"lagEntries"`
		}
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			if err := json.NewDecoder(resp.Body).Decode(&ready); err != nil {
				t.Errorf("readyz: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode == 200 && ready.Applied == last && ready.LagEntries == 0 {
				return nil
			}
		}
		return withStderr{fmt.Errorf("not caught up (%v)", err), &stderr}
	})
	resp, err := http.Get("http://" + addr + "/v1/sessions")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatalf("sessions: %v", err)
	}
	resp.Body.Close()
	if len(list.Sessions) != 2 || list.Sessions[0].ID != "b2" {
		t.Fatalf("/v1/sessions over the command's --http: %+v", list)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("projector exit status %d; stderr:\n%s", c, stderr.String())
	}

	c, dump, errOut := runCairn(t, "projector", "dump", "--data", data)
	if c != 0 || !strings.Contains(dump, fmt.Sprintf("applied %d\n", last)) {
		t.Fatalf("dump: %d %q %s", c, dump, errOut)
	}
	c, rebuilt, errOut := runCairn(t, "projector", "rebuild", "--nats", srv.ClientURL(), "--data", t.TempDir())
	if c != 0 || rebuilt != dump {
		t.Fatalf("rebuild: %d\n%s\nwant the live dump:\n%s\nstderr: %s", c, rebuilt, dump, errOut)
	}
	c, keys, _ := runCairn(t, "projector", "dump", "--data", data, "--keys")
	if c != 0 || !strings.Contains(keys, `"s/default.a1" `) || !strings.HasSuffix(keys, dump) {
		t.Fatalf("dump --keys: %d\n%s", c, keys)
	}

	c, out, errOut := runCairn(t, "replay", "a1", "--nats", srv.ClientURL(), "--until", "2")
	if c != 0 || !strings.Contains(out, "status running") || !strings.Contains(out, "* e1 message/user") {
		t.Fatalf("replay --until 2: %d\n%s\n%s", c, out, errOut)
	}
	c, out, _ = runCairn(t, "replay", "a1", "--nats", srv.ClientURL())
	if c != 0 || !strings.Contains(out, "status idle") || !strings.Contains(out, "* e2 message/assistant") {
		t.Fatalf("replay: %d\n%s", c, out)
	}
	c, out, _ = runCairn(t, "replay", "b2", "--nats", srv.ClientURL(), "--json", "--until", "2026-11-05T08:01:01Z")
	var r struct {
		Summary struct{ Entries int } `json:"summary"`
	}
	if c != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Summary.Entries != 2 {
		t.Fatalf("replay --json --until TIME: %d\n%s", c, out)
	}
	if c, _, errOut := runCairn(t, "replay", "zz", "--nats", srv.ClientURL()); c != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("replay of an unknown session: %d %s", c, errOut)
	}
}

func TestProjectorCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"projector", "--nats", "nats://127.0.0.1:1"},
		{"projector", "--nats", "nats://127.0.0.1:1", "--data", t.TempDir(), "--batch", "-1"},
		{"projector", "--nats", "nats://127.0.0.1:1", "--data", t.TempDir(), "--prefix", "A B"},
		{"projector", "rebuild", "--nats", "nats://127.0.0.1:1"}, // --nats is for an offline rebuild: needs --data
		{"projector", "rebuild", "--until", "5"},
		{"projector", "rebuild", "--server", "ftp://gateway"},
		{"projector", "dump", "--keys"}, // the keys are for a stopped database: needs --data
		{"projector", "dump", "--server", "not a url"},
		{"replay", "bad id"},
		{"replay", "ok", "--until", "yesterday"},
		{"replay", "ok", "--until", "0"},
	} {
		if c, _, errOut := runCairn(t, args...); c != 2 {
			t.Errorf("%v: exit status %d, want 2; stderr %s", args, c, errOut)
		}
	}
}
