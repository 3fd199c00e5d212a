package follow_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/follow"
)

// got collects what a Follower delivers.
type got struct {
	mu   sync.Mutex
	seqs []uint64
	data []string
	more chan struct{}
}

func newGot() *got { return &got{more: make(chan struct{}, 1)} }

func (g *got) fn(m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		panic(err)
	}
	g.mu.Lock()
	g.seqs = append(g.seqs, meta.Sequence.Stream)
	g.data = append(g.data, string(m.Data()))
	g.mu.Unlock()
	select {
	case g.more <- struct{}{}:
	default:
	}
}

// wait waits until n messages are delivered and returns their data.
func (g *got) wait(t *testing.T, n int, within time.Duration) []string {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		g.mu.Lock()
		if len(g.data) >= n {
			out := append([]string(nil), g.data...)
			g.mu.Unlock()
			return out
		}
		have := len(g.data)
		g.mu.Unlock()
		select {
		case <-g.more:
		case <-deadline.C:
			t.Fatalf("%d of %d messages delivered within %s", have, n, within)
		}
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// stream creates stream S, retrying while a new cluster still places its
// peers.
func stream(t *testing.T, js jetstream.JetStream, replicas int) {
	t.Helper()
	var err error
	poll(t, func() (struct{}, bool) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Replicas: replicas, Duplicates: time.Minute})
		return struct{}{}, err == nil
	})
}

// publish stores from..to-1 on subject, each under its own message id, so a
// retry after a lost acknowledgement (a node just killed) stores it once.
func publish(t *testing.T, js jetstream.JetStream, subject string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		var err error
		poll(t, func() (struct{}, bool) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, err = js.Publish(ctx, subject, []byte(strconv.Itoa(i)), jetstream.WithMsgID(subject+strconv.Itoa(i)))
			return struct{}{}, err == nil
		})
	}
}

// inOrder fails unless data is exactly from..to-1.
func inOrder(t *testing.T, data []string, from, to int) {
	t.Helper()
	if len(data) != to-from {
		t.Fatalf("delivered %d messages %v, want %d..%d", len(data), data, from, to-1)
	}
	for i, d := range data {
		if d != strconv.Itoa(from+i) {
			t.Fatalf("delivery %d is %q, want %d (all: %v)", i, d, from+i, data)
		}
	}
}

func TestStartPositions(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.JetStream(t, s.Server)
	stream(t, js, 1)
	publish(t, js, "s.a", 0, 3)
	publish(t, js, "s.b", 100, 101)

	before := time.Now()
	publish(t, js, "s.b", 101, 102)
	all, news, filtered, since := newGot(), newGot(), newGot(), newGot()
	for _, c := range []struct {
		cfg follow.Config
		g   *got
	}{{follow.Config{Stream: "S", From: 1}, all}, {follow.Config{Stream: "S"}, news}, {follow.Config{Stream: "S", Filter: "s.a", From: 2}, filtered}, {follow.Config{Stream: "S", Filter: "s.b", Since: before}, since}} {
		f, err := follow.Start(t.Context(), js, c.cfg, c.g.fn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Stop)
	}
	publish(t, js, "s.a", 3, 5)
	if d := all.wait(t, 7, 10*time.Second); fmt.Sprint(d) != "[0 1 2 100 101 3 4]" {
		t.Fatalf("From 1 delivered %v", d)
	}
	inOrder(t, news.wait(t, 2, 10*time.Second), 3, 5)
	inOrder(t, filtered.wait(t, 4, 10*time.Second), 1, 5)
	inOrder(t, since.wait(t, 1, 10*time.Second), 101, 102)
}

func TestBadConfig(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.JetStream(t, s.Server)
	fn := func(jetstream.Msg) {}
	for _, c := range []struct {
		cfg  follow.Config
		fn   func(jetstream.Msg)
		want string
	}{
		{follow.Config{}, fn, "follow: Stream is required"},
		{follow.Config{Stream: "S"}, nil, "follow: fn is required"},
		{follow.Config{Stream: "S", Heartbeat: 100 * time.Millisecond}, fn, "follow: Heartbeat 100ms: want 500ms to 30s (the server's range)"},
		{follow.Config{Stream: "S", OpenTimeout: -1}, fn, "follow: OpenTimeout -1ns must not be negative"},
		{follow.Config{Stream: "NOPE"}, fn, "follow: stream NOPE: nats: API error: code=404 err_code=10059 description=stream not found"},
	} {
		_, err := follow.Start(t.Context(), js, c.cfg, c.fn)
		if err == nil || err.Error() != c.want {
			t.Errorf("Start(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

// A consumer deleted under the Follower is replaced at the next sequence:
// nothing is lost or delivered twice.
func TestReplacesDeletedConsumer(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.JetStream(t, s.Server)
	stream(t, js, 1)
	g := newGot()
	f, err := follow.Start(t.Context(), js, follow.Config{Stream: "S", Heartbeat: 500 * time.Millisecond, Logger: testLogger(t)}, g.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	n := 0
	for round := range 3 {
		publish(t, js, "s.x", n, n+5)
		n += 5
		g.wait(t, n, 10*time.Second)
		name := waitConsumer(t, f)
		if err := js.DeleteConsumer(t.Context(), "S", name); err != nil {
			t.Fatalf("round %d: delete %s: %v", round, name, err)
		}
		waitRestarts(t, f, round+1)
	}
	publish(t, js, "s.x", n, n+5)
	inOrder(t, g.wait(t, n+5, 10*time.Second), 0, n+5)
}

func waitConsumer(t *testing.T, f *follow.Follower) string {
	t.Helper()
	return poll(t, func() (string, bool) { n := f.Consumer(); return n, n != "" })
}

func waitRestarts(t *testing.T, f *follow.Follower, n int) {
	t.Helper()
	poll(t, func() (string, bool) { return "", f.Restarts() >= n })
}

// poll calls cond until it reports true, for up to 60s.
func poll[T any](t *testing.T, cond func() (T, bool)) T {
	t.Helper()
	var v T
	kittest.Eventually(t, 60*time.Second, "condition", func() (ok bool) {
		v, ok = cond()
		return ok
	})
	return v
}

// The node serving the Follower's consumer is lost and stays down: the
// Follower opens a consumer elsewhere and delivers everything in order.
func TestNodeServingTheConsumerStaysDown(t *testing.T) {
	testNodeLoss(t, func(t *testing.T, js jetstream.JetStream, f *follow.Follower) string {
		info, err := js.Consumer(t.Context(), "S", waitConsumer(t, f))
		if err != nil {
			t.Fatal(err)
		}
		return info.CachedInfo().Cluster.Leader
	})
}

// The node the Follower's client is connected to is lost and stays down: the
// client reconnects elsewhere and the Follower goes on in order.
func TestNodeOfTheClientStaysDown(t *testing.T) {
	testNodeLoss(t, func(t *testing.T, js jetstream.JetStream, f *follow.Follower) string {
		return js.Conn().ConnectedServerName()
	})
}

func testNodeLoss(t *testing.T, victim func(*testing.T, jetstream.JetStream, *follow.Follower) string) {
	c := natstest.RunCluster(t, 3)
	_, js := c.JetStream()
	_, pub := c.JetStream()
	stream(t, pub, 3)
	g := newGot()
	f, err := follow.Start(t.Context(), js, follow.Config{Stream: "S", Heartbeat: 500 * time.Millisecond, Logger: testLogger(t)}, g.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	publish(t, pub, "s.x", 0, 10)
	g.wait(t, 10, 30*time.Second)
	name := victim(t, js, f)
	killed := -1
	for i := range c.Size() {
		if s := c.Server(i); s != nil && s.Name() == name {
			killed = i
		}
	}
	if killed < 0 {
		t.Fatalf("no running node is named %q", name)
	}
	c.Kill(killed)
	publish(t, pub, "s.x", 10, 30)
	inOrder(t, g.wait(t, 30, 60*time.Second), 0, 30)
	if c.Server(killed) != nil {
		t.Fatal("the killed node came back")
	}
}

// fn is never called after Stop returns, even while messages arrive.
func TestNoDeliveryAfterStop(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.JetStream(t, s.Server)
	stream(t, js, 1)
	var stopped, late atomic.Bool
	var n atomic.Int64
	f, err := follow.Start(t.Context(), js, follow.Config{Stream: "S"}, func(jetstream.Msg) {
		if stopped.Load() {
			late.Store(true)
		}
		n.Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			_, _ = js.PublishAsync("s.x", []byte(strconv.Itoa(i))) // a flood: a refused publish (too many pending) is retried
		}
	}()
	poll(t, func() (int64, bool) { return 0, n.Load() > 100 })
	f.Stop()
	stopped.Store(true)
	defer wg.Wait()
	defer cancel()
	st, err := js.Stream(t.Context(), "S")
	if err != nil {
		t.Fatal(err)
	}
	lastSeq := func() uint64 {
		info, err := st.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return info.State.LastSeq
	}
	atStop := lastSeq()
	poll(t, func() (int64, bool) { return 0, lastSeq() > atStop+100 }) // more arrive after Stop
	if late.Load() {
		t.Fatal("fn was called after Stop returned")
	}
}

// TestStartStreamLookupUnanswered: a stream look-up the server never answers
// (its leader was lost mid-request) ends Start after OpenTimeout, even when
// ctx has a far deadline (nats.go then applies no timeout of its own).
func TestStartStreamLookupUnanswered(t *testing.T) {
	s := natstest.RunServer(t)
	nc, _ := natstest.JetStream(t, s.Server)
	sub, err := nc.Subscribe("silent.>", func(*nats.Msg) {}) // takes API requests, answers none
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	js, err := jetstream.NewWithAPIPrefix(nc, "silent")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		f, err := follow.Start(ctx, js, follow.Config{Stream: "S", OpenTimeout: 500 * time.Millisecond}, func(jetstream.Msg) {})
		if f != nil {
			f.Stop()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Start = %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(time.Minute):
		cancel()
		t.Fatalf("Start still waiting for the stream look-up a minute later (OpenTimeout 500ms): %v", <-done)
	}
}
