package workpool_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/workpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// eventually polls cond every 10ms until it holds, failing after 20s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll(cond) {
		t.Fatalf("%s: not within 20s", what)
	}
}

// poll reports whether cond came to hold within 20s, polling every 10ms; it
// is what a handler's goroutine, which must not call t.Fatal, waits with.
func poll(cond func() bool) bool {
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

type fixture struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	cons jetstream.Consumer
}

// setup makes stream WORK on work.> with a durable pull consumer of ackWait
// and publishes n messages.
func setup(t *testing.T, ackWait time.Duration, n int) fixture {
	t.Helper()
	srv := natstest.RunServer(t)
	nc, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WORK", Subjects: []string{"work.>"}}); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, "WORK", jetstream.ConsumerConfig{Durable: "workers",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxDeliver: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := js.Publish(ctx, fmt.Sprintf("work.%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	return fixture{nc: nc, js: js, cons: cons}
}

func start(t *testing.T, ctx context.Context, cfg workpool.Config) *workpool.Pool {
	t.Helper()
	cfg.PullWait = 100 * time.Millisecond
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	}
	p, err := workpool.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stopAll cancels the pool's context and waits for it, at the end of a test.
func stopAll(t *testing.T, cancel context.CancelFunc, p *workpool.Pool) {
	t.Cleanup(func() { cancel(); p.Wait() })
}

// Slots bound the handlers running at once: with 3 slots and 10 messages
// whose handlers wait, exactly 3 run until they are let go, and then every
// message is handled.
func TestSlotsBoundConcurrency(t *testing.T) {
	f := setup(t, 30*time.Second, 10)
	release := make(chan struct{})
	var running, peak, handled atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	p := start(t, ctx, workpool.Config{Consumer: f.cons, Slots: 3, AckWait: 30 * time.Second, ShutdownTimeout: time.Second,
		Handle: func(_ context.Context, m jetstream.Msg) {
			n := running.Add(1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			<-release
			running.Add(-1)
			handled.Add(1)
			_ = m.Ack()
		}})
	stopAll(t, cancel, p)
	eventually(t, "3 handlers running", func() bool { return p.Running() == 3 })
	// The slots are full: the consumer has handed out three messages, no more.
	info, err := f.cons.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 3 {
		t.Fatalf("messages taken with 3 slots full = %d, want 3", info.NumAckPending)
	}
	close(release)
	eventually(t, "every message handled", func() bool { return handled.Load() == 10 })
	if got := peak.Load(); got != 3 {
		t.Fatalf("most handlers at once = %d, want 3", got)
	}
}

// In-progress acknowledgements keep a long handler's message: the handler
// runs until five in-progress acks (over five thirds of AckWait) have been
// sent, and the message is delivered once only, though a second slot is free
// to take a redelivery.
func TestInProgressAcksPreventRedelivery(t *testing.T) {
	const ackWait = 300 * time.Millisecond
	f := setup(t, ackWait, 1)
	var beats atomic.Int64
	sub, err := f.nc.Subscribe("$JS.ACK.WORK.workers.>", func(m *nats.Msg) {
		if strings.HasPrefix(string(m.Data), "+WPI") {
			beats.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	var deliveries atomic.Int64
	acked := make(chan uint64, 1)
	ctx, cancel := context.WithCancel(context.Background())
	p := start(t, ctx, workpool.Config{Consumer: f.cons, Slots: 2, AckWait: ackWait, ShutdownTimeout: time.Second,
		Handle: func(_ context.Context, m jetstream.Msg) {
			deliveries.Add(1)
			if beats.Load() > 0 {
				return // a redelivery while the first is running: counted, left alone
			}
			if !poll(func() bool { return beats.Load() >= 5 }) {
				t.Error("five in-progress acks: not within 20s")
			}
			meta, err := m.Metadata()
			if err != nil {
				t.Error(err)
			}
			_ = m.DoubleAck(context.Background())
			acked <- meta.NumDelivered
		}})
	stopAll(t, cancel, p)
	if n := <-acked; n != 1 {
		t.Fatalf("the message was acknowledged on delivery %d, want 1", n)
	}
	info, err := f.cons.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.NumRedelivered != 0 || info.NumAckPending != 0 || deliveries.Load() != 1 {
		t.Fatalf("redelivered %d, pending %d, handled %d times; want 0, 0, 1", info.NumRedelivered, info.NumAckPending, deliveries.Load())
	}
}

// At the shutdown deadline a running handler's context is cancelled with
// ErrShutdown and its unsettled message is handed back, so another pool on
// the same consumer takes it at once (long before AckWait would have). With
// free slots, the stopping pool's last pull may catch the handed-back
// message once more; it passes it on, delayed, instead of bouncing it.
func TestShutdownHandsBackUnfinishedWork(t *testing.T) {
	for _, c := range []struct {
		slots       int
		maxDelivery uint64
	}{{1, 2}, {4, 3}} {
		t.Run(fmt.Sprintf("slots=%d", c.slots), func(t *testing.T) {
			f := setup(t, time.Hour, 1)
			started := make(chan struct{})
			var cause error
			ctxA, cancelA := context.WithCancel(context.Background())
			a := start(t, ctxA, workpool.Config{Consumer: f.cons, Slots: c.slots, AckWait: time.Hour, ShutdownTimeout: 50 * time.Millisecond,
				Handle: func(ctx context.Context, _ jetstream.Msg) {
					close(started)
					<-ctx.Done()
					cause = context.Cause(ctx) // and return without settling
				}})
			<-started
			cancelA()
			a.Wait()
			if !errors.Is(cause, workpool.ErrShutdown) {
				t.Fatalf("cause of the cut-off handler = %v, want ErrShutdown", cause)
			}
			got := make(chan uint64, 1)
			ctxB, cancelB := context.WithCancel(context.Background())
			b := start(t, ctxB, workpool.Config{Consumer: f.cons, Slots: 1, AckWait: time.Hour, ShutdownTimeout: time.Second,
				Handle: func(_ context.Context, m jetstream.Msg) {
					meta, err := m.Metadata()
					if err != nil {
						t.Error(err)
						return
					}
					_ = m.Ack()
					got <- meta.NumDelivered
				}})
			stopAll(t, cancelB, b)
			if n := <-got; n < 2 || n > c.maxDelivery {
				t.Fatalf("the second pool got delivery %d, want 2-%d", n, c.maxDelivery)
			}
		})
	}
}

// A handler that finishes within the shutdown deadline is not cancelled:
// its context stays live after Start's is done, and its acknowledgement
// stands (the message is not handed back).
func TestShutdownLetsRunningWorkFinish(t *testing.T) {
	f := setup(t, time.Hour, 1)
	started, release := make(chan struct{}), make(chan struct{})
	var ctxErr error
	ctx, cancel := context.WithCancel(context.Background())
	p := start(t, ctx, workpool.Config{Consumer: f.cons, Slots: 1, AckWait: time.Hour, ShutdownTimeout: time.Hour,
		Handle: func(hctx context.Context, m jetstream.Msg) {
			close(started)
			<-release
			ctxErr = hctx.Err()
			_ = m.DoubleAck(context.Background())
		}})
	<-started
	cancel()
	close(release)
	p.Wait()
	if ctxErr != nil {
		t.Fatalf("the handler's context ended before the deadline: %v", ctxErr)
	}
	info, err := f.cons.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 0 || info.NumPending != 0 || info.AckFloor.Consumer != 1 {
		t.Fatalf("after shutdown: pending %d, ack pending %d, ack floor %d; want the one message acknowledged",
			info.NumPending, info.NumAckPending, info.AckFloor.Consumer)
	}
}

// Start refuses a configuration it cannot run, naming the field.
func TestStartRefusesBadConfig(t *testing.T) {
	f := setup(t, time.Second, 0)
	h := func(context.Context, jetstream.Msg) {}
	l := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		cfg  workpool.Config
		want string
	}{
		{workpool.Config{Handle: h, Slots: 1, AckWait: time.Second, Logger: l}, "Consumer"},
		{workpool.Config{Consumer: f.cons, Slots: 1, AckWait: time.Second, Logger: l}, "Handle"},
		{workpool.Config{Consumer: f.cons, Handle: h, AckWait: time.Second, Logger: l}, "Slots"},
		{workpool.Config{Consumer: f.cons, Handle: h, Slots: 1, Logger: l}, "AckWait"},
		{workpool.Config{Consumer: f.cons, Handle: h, Slots: 1, AckWait: time.Second, ShutdownTimeout: -1, Logger: l}, "ShutdownTimeout"},
		{workpool.Config{Consumer: f.cons, Handle: h, Slots: 1, AckWait: time.Second}, "Logger"},
	} {
		_, err := workpool.Start(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
}
