package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// stallingKV is the real bucket whose writes hang, once stalled, until
// their context ends: a renewal stuck behind a NATS election or a network
// partition.
type stallingKV struct {
	jetstream.KeyValue
	mu      sync.Mutex
	stalled bool
}

func (k *stallingKV) stall() { k.mu.Lock(); k.stalled = true; k.mu.Unlock() }

func (k *stallingKV) hang(ctx context.Context) error {
	k.mu.Lock()
	s := k.stalled
	k.mu.Unlock()
	if !s {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (k *stallingKV) Put(ctx context.Context, key string, v []byte) (uint64, error) {
	if err := k.hang(ctx); err != nil {
		return 0, err
	}
	return k.KeyValue.Put(ctx, key, v)
}

func (k *stallingKV) Update(ctx context.Context, key string, v []byte, rev uint64) (uint64, error) {
	if err := k.hang(ctx); err != nil {
		return 0, err
	}
	return k.KeyValue.Update(ctx, key, v, rev)
}

// A holder whose renewals hang gives its leases up while the keys still
// stand, so nobody else can have taken them yet: at the moment Lost runs, a
// rival's create of the key still fails.
func TestHungRenewalFencesBeforeExpiry(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	kv, err := js.CreateOrUpdateKeyValue(ctx, provision.LeasesBucket(events.Names{}, 1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	skv := &stallingKV{KeyValue: kv}
	acquired := make(chan int, 4)
	lost := make(chan error, 4)
	m, err := New(Config{KV: skv, Instance: "a", Partitions: 2, TTL: time.Second,
		Acquired: func(p int) { acquired <- p },
		Lost: func(p int) {
			// A rival tries to take the partition at the instant we let go.
			_, err := kv.Create(ctx, partitionKey(p), []byte("rival"))
			lost <- err
		}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(rctx) }()
	defer func() { cancel(); <-done }()
	<-acquired
	<-acquired
	skv.stall()
	for range 2 {
		if err := <-lost; !errors.Is(err, jetstream.ErrKeyExists) {
			t.Fatalf("a rival could create the key when the holder fenced itself (err %v): the lease overlapped", err)
		}
	}
	if n := m.Overlaps(); n != 0 {
		t.Fatalf("overlaps = %d, want 0 for a fence on time", n)
	}
}

// A process frozen past its deadline (docker pause) gives its leases up on
// waking before it renews anything, and counts each as an overlap.
func TestFrozenHolderFencesOnWakeAndCountsOverlap(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	kv, err := js.CreateOrUpdateKeyValue(ctx, provision.LeasesBucket(events.Names{}, 1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var lost []int
	m, err := New(Config{KV: kv, Instance: "a", Partitions: 3, TTL: time.Second,
		Lost: func(p int) { lost = append(lost, p) }})
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	m.now = func() time.Time { return now }
	now = time.Now()
	if err := m.round(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(m.Held()); got != 3 {
		t.Fatalf("held %d partitions, want 3", got)
	}
	// Just before the deadline nothing is given up.
	now = now.Add(m.cfg.TTL - m.margin() - time.Millisecond)
	if m.fence(); len(lost) != 0 {
		t.Fatalf("fenced %v before the deadline", lost)
	}
	// Frozen for longer than the TTL: the key may be another's.
	now = now.Add(2 * m.cfg.TTL)
	m.fence()
	if len(lost) != 3 || len(m.Held()) != 0 {
		t.Fatalf("after the freeze lost %v, still held %v; want all 3 given up", lost, m.Held())
	}
	if n := m.Overlaps(); n != 3 {
		t.Fatalf("overlaps = %d, want 3", n)
	}
}

func TestTTLFloor(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	kv, err := js.CreateOrUpdateKeyValue(context.Background(), provision.LeasesBucket(events.Names{}, 1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{KV: kv, Instance: "a", Partitions: 1, TTL: MinTTL - time.Millisecond}); err == nil {
		t.Fatalf("a TTL under %s was accepted", MinTTL)
	}
}

// Holds follows the clock, not the lease loop: a writer that wakes from a
// freeze is refused at its deadline even though Run has not yet woken to
// call Lost, and a renewal on time makes it true again.
func TestHoldsEndsAtTheDeadlineBeforeLost(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	kv, err := js.CreateOrUpdateKeyValue(ctx, provision.LeasesBucket(events.Names{}, 1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	move := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var lost []int
	m, err := New(Config{KV: kv, Instance: "a", Partitions: 2, TTL: time.Second, Now: clock,
		Lost: func(p int) { lost = append(lost, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if m.Holds(0) || m.Holds(1) {
		t.Fatal("Holds is true before any lease was taken")
	}
	if err := m.round(ctx); err != nil {
		t.Fatal(err)
	}
	if !m.Holds(0) || !m.Holds(1) {
		t.Fatal("Holds is false for leases just taken")
	}
	if m.Holds(-1) || m.Holds(2) {
		t.Fatal("Holds is true for a partition out of range")
	}
	move(m.cfg.TTL - m.margin() - time.Millisecond)
	if !m.Holds(0) {
		t.Fatal("Holds is false before the deadline")
	}
	move(time.Millisecond)
	if m.Holds(0) || m.Holds(1) {
		t.Fatal("Holds is true at the deadline")
	}
	if len(lost) != 0 || len(m.Held()) != 2 {
		t.Fatalf("lost %v, held %v: only the clock moved, the loop did not run", lost, m.Held())
	}
	// The loop wakes: it gives both up, and Holds stays false.
	m.fence()
	if len(lost) != 2 || m.Holds(0) || m.Holds(1) {
		t.Fatalf("after fence lost %v, Holds %v %v", lost, m.Holds(0), m.Holds(1))
	}
}

// A renewal that lands after the deadline, before the loop gave the lease
// up, succeeded on the key's revision, so nobody else held it: Holds is
// true again and Changed wakes the writers that waited.
func TestLateRenewalHoldsAgainAndSignals(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	kv, err := js.CreateOrUpdateKeyValue(ctx, provision.LeasesBucket(events.Names{}, 1, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m, err := New(Config{KV: kv, Instance: "a", Partitions: 1, TTL: time.Minute, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.round(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(m.cfg.TTL) // past the deadline, the key still stands (real time)
	mu.Unlock()
	changed := m.Changed()
	if m.Holds(0) {
		t.Fatal("Holds is true past the deadline")
	}
	if err := m.round(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("the renewal did not signal Changed")
	}
	if !m.Holds(0) {
		t.Fatal("Holds is false after a renewal that succeeded")
	}
}
