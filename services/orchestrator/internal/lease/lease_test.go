package lease

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// holder records the partitions one manager believes it holds.
type holder struct {
	mu   sync.Mutex
	held map[int]bool
}

func (h *holder) set(p int, v bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v {
		h.held[p] = true
	} else {
		delete(h.held, p)
	}
}

func (h *holder) snapshot() map[int]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[int]bool{}
	for p := range h.held {
		out[p] = true
	}
	return out
}

type runner struct {
	h      *holder
	cancel context.CancelFunc
	done   chan struct{}
}

func start(t *testing.T, js jetstream.JetStream, instance string, partitions int) *runner {
	t.Helper()
	ctx := context.Background()
	kv, err := js.CreateOrUpdateKeyValue(ctx, provision.LeasesBucket(events.Names{}, 1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	h := &holder{held: map[int]bool{}}
	m, err := New(Config{KV: kv, Instance: instance, Partitions: partitions, TTL: time.Second,
		Acquired: func(p int) { h.set(p, true) }, Lost: func(p int) { h.set(p, false) }})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &runner{h: h, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := m.Run(rctx); err != nil {
			t.Errorf("lease run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	kittest.Eventually(t, 20*time.Second, what, cond)
}

// split reports whether the runners hold disjoint sets that cover all n
// partitions, each holding at least one.
func split(n int, rs ...*runner) bool {
	seen := map[int]bool{}
	for _, r := range rs {
		s := r.h.snapshot()
		if len(s) == 0 {
			return false
		}
		for p := range s {
			if seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == n
}

func TestPartitionsSplitAndFailOver(t *testing.T) {
	srv := natstest.RunServer(t)
	_, jsA := natstest.JetStream(t, srv.Server)
	ncB, jsB := natstest.JetStream(t, srv.Server)
	const n = 16
	a := start(t, jsA, "a", n)
	eventually(t, "a alone holds everything", func() bool { return split(n, a) })
	b := start(t, jsB, "b", n)
	eventually(t, "a and b split the partitions", func() bool { return split(n, a, b) })

	// b's process dies: its connection goes away without releasing anything.
	ncB.Close()
	b.cancel()
	<-b.done
	eventually(t, "a takes b's partitions after they expire", func() bool { return len(a.h.snapshot()) == n })
}

func TestGracefulStopHandsOver(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	const n = 8
	a := start(t, js, "a", n)
	b := start(t, js, "b", n)
	eventually(t, "split", func() bool { return split(n, a, b) })
	b.cancel()
	<-b.done
	if got := b.h.snapshot(); len(got) != 0 {
		t.Fatalf("b still believes it holds %v after stopping", got)
	}
	eventually(t, "a holds all", func() bool { return len(a.h.snapshot()) == n })
}

func TestOwnerIsBalanced(t *testing.T) {
	members := []string{"orch-1", "orch-2", "orch-3"}
	count := map[string]int{}
	for p := 0; p < 300; p++ {
		count[owner(p, members)]++
	}
	for _, m := range members {
		if count[m] < 70 {
			t.Errorf("%s owns %d of 300 partitions; rendezvous hashing should spread them (%v)", m, count[m], count)
		}
	}
	// Removing a member moves only its partitions.
	for p := 0; p < 300; p++ {
		before := owner(p, members)
		after := owner(p, members[:2])
		if before != "orch-3" && before != after {
			t.Fatalf("partition %d moved from %s to %s when orch-3 left", p, before, after)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "KV is required"},
	} {
		if _, err := New(c.cfg); err == nil || err.Error() != "lease: "+c.want {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}
