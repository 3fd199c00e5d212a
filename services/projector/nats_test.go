package projector

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/nats-io/nats.go/jetstream"
)

// sessionsStream starts a server provisioned like production (CAIRN_SESSIONS
// among the rest).
func sessionsStream(t testing.TB) (*natstest.Server, jetstream.JetStream) {
	t.Helper()
	srv, _, js := natstest.RunProvisioned(t, events.Names{}, provision.Options{})
	return srv, js
}

// publish appends msgs in order and returns the last stream sequence.
func publish(t testing.TB, js jetstream.JetStream, msgs []synth.Msg) uint64 {
	t.Helper()
	ctx := context.Background()
	var last uint64
	var futures []jetstream.PubAckFuture
	for _, m := range msgs {
		f, err := js.PublishAsync(m.Subject, m.Data)
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case ack := <-f.Ok():
			last = max(last, ack.Sequence)
		case err := <-f.Err():
			t.Fatal(err)
		case <-ctx.Done():
		}
	}
	return last
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	kittest.Eventually(t, 60*time.Second, what, cond)
}

// running is a projector whose Run is in progress.
type running struct {
	*Projector
	cancel context.CancelFunc
	done   chan error
}

func start(t testing.TB, cfg Config) *running {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Projector: p, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	return r
}

// stop ends Run, closes the database and checks that no goroutine of the
// package outlived it.
func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the projector's goroutines to end", func() bool { return leaked() == "" })
}

// leaked returns the stack of a goroutine running projector code other than
// tests, or "".
func leaked() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "services/projector.") && !strings.Contains(g, "services/projector.Test") &&
			!strings.Contains(g, "services/projector.leaked") && !strings.Contains(g, "services/projector.Benchmark") {
			return g
		}
	}
	return ""
}

func rebuildDigest(t testing.TB, js jetstream.JetStream, until uint64) Digest {
	t.Helper()
	dir := t.TempDir()
	if _, err := Rebuild(context.Background(), Config{JetStream: js, Dir: dir}, until); err != nil {
		t.Fatal(err)
	}
	d, err := Dump(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func liveDigest(t testing.TB, p *Projector) Digest {
	t.Helper()
	d, err := p.live.current().Dump(nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func getJSON(t testing.TB, h http.Handler, path string, v any) int {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, body)
		}
	}
	return resp.StatusCode
}

func TestLiveEqualsRebuild(t *testing.T) {
	_, js := sessionsStream(t)
	log := synth.Log(21, 30, 1200)
	publish(t, js, log[:600])
	r := start(t, Config{JetStream: js, Dir: t.TempDir(), BatchSize: 50})
	waitFor(t, "600 applied", func() bool { return r.Applied() == 600 })
	last := publish(t, js, log[600:]) // while it runs
	waitFor(t, "all applied", func() bool { return r.Applied() == last })

	ops := r.OpsHandler()
	waitFor(t, "lag 0", func() bool { return r.Lag() == 0 })
	var ready Readiness
	if code := getJSON(t, ops, "/readyz", &ready); code != 200 || ready.Status != "ready" || ready.Applied != last || ready.LagEntries != 0 {
		t.Fatalf("/readyz: %d %+v", code, ready)
	}
	if code := getJSON(t, ops, "/healthz", nil); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	srv := httptest.NewServer(ops)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close()
	for _, want := range []string{"cairn_projector_lag_entries 0", "cairn_projector_applied_sequence 1200", "cairn_projector_entries_applied_total 1200"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}

	live := liveDigest(t, r.Projector)
	if rb := rebuildDigest(t, js, 0); rb != live {
		t.Fatalf("rebuild %+v differs from live %+v", rb, live)
	}
	r.stop(t)
}

func TestRestartResumesWhereItStopped(t *testing.T) {
	_, js := sessionsStream(t)
	log := synth.Log(5, 10, 700)
	publish(t, js, log[:400])
	dir := t.TempDir()
	r := start(t, Config{JetStream: js, Dir: dir})
	waitFor(t, "400 applied", func() bool { return r.Applied() == 400 })
	r.stop(t)

	last := publish(t, js, log[400:])
	r = start(t, Config{JetStream: js, Dir: dir})
	waitFor(t, "all applied", func() bool { return r.Applied() == last })
	live := liveDigest(t, r.Projector)
	if rb := rebuildDigest(t, js, 0); rb != live {
		t.Fatalf("rebuild %+v differs from live %+v after a restart", rb, live)
	}
	r.stop(t)

	// The durable consumer was kept: it acknowledged everything.
	c, err := js.Consumer(context.Background(), events.Names{}.SessionsStream(), "cairn-projector")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.AckFloor.Stream != last {
		t.Fatalf("consumer ack floor %d, want %d", info.AckFloor.Stream, last)
	}
}

// A database that is behind its consumer (lost to a crash, or replaced) makes
// the projector recreate the consumer at the database's position: nothing is
// skipped.
func TestDatabaseBehindConsumer(t *testing.T) {
	_, js := sessionsStream(t)
	log := synth.Log(9, 8, 300)
	last := publish(t, js, log)
	r := start(t, Config{JetStream: js, Dir: t.TempDir()})
	waitFor(t, "all applied", func() bool { return r.Applied() == last })
	want := liveDigest(t, r.Projector)
	r.stop(t)

	r = start(t, Config{JetStream: js, Dir: t.TempDir()}) // empty database, same durable
	waitFor(t, "all applied again", func() bool { return r.Applied() == last })
	if got := liveDigest(t, r.Projector); got != want {
		t.Fatalf("fresh database %+v, want %+v", got, want)
	}
	r.stop(t)
}

func TestRebuildUntilAndRefusals(t *testing.T) {
	_, js := sessionsStream(t)
	log := synth.Log(2, 4, 100)
	publish(t, js, log)
	dir40 := t.TempDir()
	res, err := Rebuild(context.Background(), Config{JetStream: js, Dir: dir40}, 40)
	if err != nil || res.Applied != 40 {
		t.Fatalf("Rebuild until 40: %+v, %v", res, err)
	}
	if d, err := Dump(dir40, nil); err != nil || d.Applied != 40 {
		t.Fatalf("Dump after Rebuild until 40: %+v, %v", d, err)
	}
	dir := t.TempDir()
	if _, err := Rebuild(context.Background(), Config{JetStream: js, Dir: dir}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Rebuild(context.Background(), Config{JetStream: js, Dir: dir}, 0); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("rebuild into a used directory: %v, want ErrNotEmpty", err)
	}
	if _, err := Rebuild(context.Background(), Config{JetStream: js}, 0); !errors.Is(err, ErrConfig) {
		t.Fatalf("rebuild without Dir: %v, want ErrConfig", err)
	}
}

func TestReplay(t *testing.T) {
	_, js := sessionsStream(t)
	root := "e1"
	t0 := time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC)
	ts := func(i int) string { return events.FormatTime(t0.Add(time.Duration(i) * time.Second)) }
	entries := []events.Entry{
		{Type: events.EntrySession, Version: 3, ID: "r1", Timestamp: ts(0), Model: "scripted/a"},
		{Type: events.EntryMessage, ID: "e1", Timestamp: ts(1), Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("hi")}},
		{Type: events.EntryMessage, ID: "e2", ParentID: &root, Timestamp: ts(2), Message: &events.Message{Role: events.RoleAssistant, Content: events.TextContent("hello"), StopReason: events.StopEnd}},
		{Type: events.EntryLeaf, ID: "e3", ParentID: strPtr("e2"), Timestamp: ts(3), TargetID: &root},
	}
	var msgs []synth.Msg
	for i, e := range entries {
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, synth.Msg{Subject: "cairn.session.default.r1", Data: b})
		if i == 1 { // another session in between
			msgs = append(msgs, synth.Log(1, 1, 1)[0])
		}
	}
	publish(t, js, msgs)

	ctx := context.Background()
	full, err := Replay(ctx, js, "", events.DefaultRef("r1"), ReplayPoint{})
	if err != nil {
		t.Fatal(err)
	}
	if full.Summary.Entries != 4 || *full.Summary.Leaf != "e1" || full.Summary.Status != StatusIdle || len(full.Entries) != 4 {
		t.Fatalf("full replay: %+v", full.Summary)
	}
	// Sequence 2 is the user message: the session was running then.
	atSeq, err := Replay(ctx, js, "", events.DefaultRef("r1"), ReplayPoint{Seq: 2})
	if err != nil {
		t.Fatal(err)
	}
	if atSeq.Summary.Entries != 2 || atSeq.Summary.Status != StatusRunning || *atSeq.Summary.Leaf != "e1" {
		t.Fatalf("replay to sequence 2: %+v", atSeq.Summary)
	}
	atTime, err := Replay(ctx, js, "", events.DefaultRef("r1"), ReplayPoint{Time: t0.Add(2500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if atTime.Summary.Entries != 3 || *atTime.Summary.Leaf != "e2" {
		t.Fatalf("replay to %s: %+v", t0.Add(2500*time.Millisecond), atTime.Summary)
	}
	if _, err := Replay(ctx, js, "", events.DefaultRef("nope"), ReplayPoint{}); !errors.Is(err, ErrSessionNotFound) {
		t.Fatalf("replay of an unknown session: %v", err)
	}
	if _, err := Replay(ctx, js, "", events.DefaultRef("bad id"), ReplayPoint{}); !errors.Is(err, events.ErrInvalid) {
		t.Fatalf("replay of an invalid id: %v", err)
	}
}

func strPtr(s string) *string { return &s }

// Run waits for the stream to be created, and stops cleanly when cancelled
// while waiting.
func TestRunWaitsForStream(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	r := start(t, Config{JetStream: js, Dir: t.TempDir()})
	if got := r.Readiness().Status; got != "starting" {
		t.Fatalf("readiness before the stream exists: %q", got)
	}
	natstest.Provision(t, js, events.Names{}, provision.Options{})
	last := publish(t, js, synth.Log(4, 2, 20))
	waitFor(t, "all applied", func() bool { return r.Applied() == last })
	r.stop(t)
}
