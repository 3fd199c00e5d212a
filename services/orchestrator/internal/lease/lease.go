// Package lease divides a fixed set of partitions among the live instances of
// a service through leases in a NATS KV bucket whose keys expire (the bucket's
// max age is the lease TTL).
//
// Each instance keeps a membership key m.<instance> alive and computes, by
// rendezvous hashing over the live members, which partitions it should hold.
// It claims a free partition by creating p.<n>, renews what it holds by
// revision-checked updates, and gives up partitions that now belong to
// another member. A crashed instance stops renewing: its keys expire after
// the TTL and the others claim its partitions.
//
// # Guarantees
//
// A lease key has at most one holder at any revision, so two live instances
// never both believe they hold a partition after their next renewal.
//
// Self-fencing: a lease is valid until the moment its last successful write
// (create or renewal) was sent plus the TTL minus a margin of TTL/8. The
// server stamps the key no earlier than that send, so the key cannot expire,
// and no other instance can create it, before the local deadline passes. A
// holder whose renewals fail or hang gives the lease up (Lost) when its
// deadline passes, before another can hold it: every KV call is bounded by
// the earliest deadline of the leases held, and Run checks the deadlines
// whenever it wakes. What fencing cannot stop is a write already under way
// in a process frozen past its deadline (SIGSTOP, docker pause): its actors
// resume at the same instant as its lease loop. The session log's optimistic
// concurrency keeps the work safe then, and Overlaps counts the leases given
// up later than their deadline, the only moments two holders could overlap.
//
// [Manager.Holds] tells the holder's writers, from any goroutine, whether a
// lease is still within its deadline, by the clock alone: a writer that
// wakes from a freeze checks it before it writes, without waiting for the
// lease loop to wake and call Lost. Only a write already past that check
// when the process froze can still land after the deadline. A writer
// refused waits for [Manager.Changed]: a late renewal that succeeds (its
// revision check proves nobody else held the key) makes Holds true again;
// otherwise the loop gives the lease up.
//
// The TTL is at least one second ([MinTTL]), so the margin covers the
// scheduling and clock-reading delays of a loaded machine.
//
// # Concurrency
//
// Run calls the Acquired and Lost callbacks from its own goroutine, one at a
// time, in the order the changes happen.
package lease

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MinTTL is the shortest lease TTL New accepts.
const MinTTL = time.Second

// Config configures a Manager.
type Config struct {
	KV         jetstream.KeyValue // bucket with MaxAge = TTL (provision.LeasesBucket)
	Instance   string             // unique per process, a valid KV key token
	Partitions int                // number of partitions, the same for every instance
	TTL        time.Duration      // lease lifetime, at least MinTTL; renewals every TTL/3
	Logger     *slog.Logger
	// Now is the clock the deadlines are kept by; nil is time.Now. Tests
	// move it.
	Now func() time.Time

	Acquired func(p int) // this instance now holds p
	Lost     func(p int) // this instance no longer holds p
}

// Manager holds this instance's share of the partitions.
type Manager struct {
	cfg  Config
	held map[int]held
	now  func() time.Time // the clock; tests move it
	// valid mirrors held for Holds: each partition's deadline in Unix
	// nanoseconds, 0 when not held. Written by Run only.
	valid []atomic.Int64
	// changed is closed, and replaced, whenever a lease is taken, renewed
	// or given up (Changed).
	changed struct {
		sync.Mutex
		c chan struct{}
	}

	overlaps atomic.Int64
}

// held is one lease this instance holds.
type held struct {
	rev   uint64    // revision of our lease key
	valid time.Time // the self-fencing deadline: give it up by then
}

// New returns a Manager; Run starts it.
func New(cfg Config) (*Manager, error) {
	switch {
	case cfg.KV == nil:
		return nil, errors.New("lease: KV is required")
	case cfg.Instance == "" || strings.ContainsAny(cfg.Instance, ".*> "):
		return nil, fmt.Errorf("lease: instance %q must be a non-empty KV key token", cfg.Instance)
	case cfg.Partitions <= 0:
		return nil, fmt.Errorf("lease: partitions must be positive, got %d", cfg.Partitions)
	case cfg.TTL < MinTTL:
		return nil, fmt.Errorf("lease: TTL %s is too short (min %s)", cfg.TTL, MinTTL)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Acquired == nil {
		cfg.Acquired = func(int) {}
	}
	if cfg.Lost == nil {
		cfg.Lost = func(int) {}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	m := &Manager{cfg: cfg, held: map[int]held{}, now: now, valid: make([]atomic.Int64, cfg.Partitions)}
	m.changed.c = make(chan struct{})
	return m, nil
}

// Changed returns a channel closed at the next change of any lease (taken,
// renewed, given up): a writer refused by Holds takes it before asking
// Holds, then waits on it. Safe for concurrent use.
func (m *Manager) Changed() <-chan struct{} {
	m.changed.Lock()
	defer m.changed.Unlock()
	return m.changed.c
}

func (m *Manager) notify() {
	m.changed.Lock()
	close(m.changed.c)
	m.changed.c = make(chan struct{})
	m.changed.Unlock()
}

// Holds reports whether this instance holds partition p and its deadline
// has not passed: whether a write for p may be sent now. Safe for
// concurrent use; false for a partition out of range.
func (m *Manager) Holds(p int) bool {
	if p < 0 || p >= len(m.valid) {
		return false
	}
	v := m.valid[p].Load()
	return v != 0 && m.now().UnixNano() < v
}

// hold records the lease on p with its deadline.
func (m *Manager) hold(p int, h held) {
	m.held[p] = h
	m.valid[p].Store(h.valid.UnixNano())
	m.notify()
}

// drop forgets the lease on p; Holds is false from here on.
func (m *Manager) drop(p int) {
	m.valid[p].Store(0)
	delete(m.held, p)
	m.notify()
}

// Overlaps returns how many leases were given up after their self-fencing
// deadline had passed (the process was frozen, or its clock jumped): each
// is a window in which another instance may have held the partition too.
// Safe for concurrent use.
func (m *Manager) Overlaps() int64 { return m.overlaps.Load() }

// margin is how long before the key could expire a lease is given up.
func (m *Manager) margin() time.Duration { return m.cfg.TTL / 8 }

// fence gives up every lease whose deadline has passed, and returns the
// earliest deadline of those left (zero when none is held).
func (m *Manager) fence() time.Time {
	now := m.now()
	var next time.Time
	for _, p := range m.Held() {
		h := m.held[p]
		if now.Before(h.valid) {
			if next.IsZero() || h.valid.Before(next) {
				next = h.valid
			}
			continue
		}
		late := now.Sub(h.valid)
		if late > m.margin() {
			// Past the key's possible expiry, not only past the margin.
			m.overlaps.Add(1)
		}
		m.cfg.Logger.Warn("lease fenced: renewal overdue", "partition", p, "late", late.String(), "overlap", late > m.margin())
		m.drop(p)
		m.cfg.Lost(p)
	}
	return next
}

// bounded returns ctx limited to the earliest lease deadline: a KV call
// that hangs (a NATS leader election, a partition) must not outlive a lease.
func (m *Manager) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	var next time.Time
	for _, h := range m.held {
		if next.IsZero() || h.valid.Before(next) {
			next = h.valid
		}
	}
	if next.IsZero() {
		return context.WithTimeout(ctx, m.cfg.TTL)
	}
	return context.WithDeadline(ctx, next)
}

// Run keeps membership and leases until ctx is cancelled, then releases what
// it holds so others take over at once, and reports each release to Lost.
func (m *Manager) Run(ctx context.Context) error {
	tick := time.NewTicker(m.cfg.TTL / 3)
	defer tick.Stop()
	fenceT := time.NewTimer(time.Hour)
	defer fenceT.Stop()
	for {
		m.fence()
		if err := m.round(ctx); err != nil && ctx.Err() == nil {
			m.cfg.Logger.Warn("lease round failed", "err", err)
		}
		next := m.fence()
		if next.IsZero() {
			next = m.now().Add(time.Hour)
		}
		fenceT.Reset(max(0, next.Sub(m.now())))
		select {
		case <-ctx.Done():
			m.releaseAll()
			return nil
		case <-tick.C:
		case <-fenceT.C:
		}
	}
}

// round renews membership, reads the members and moves leases toward the
// rendezvous assignment.
func (m *Manager) round(parent context.Context) error {
	ctx, cancel := m.bounded(parent)
	defer cancel()
	if _, err := m.cfg.KV.Put(ctx, memberKey(m.cfg.Instance), []byte(time.Now().UTC().Format(time.RFC3339Nano))); err != nil {
		return fmt.Errorf("renew membership: %w", err)
	}
	members, err := m.members(ctx)
	if err != nil {
		return err
	}
	acquired := 0
	defer func() {
		if acquired > 0 {
			m.cfg.Logger.Info("partitions acquired", "n", acquired, "held", len(m.held), "of", m.cfg.Partitions)
		}
	}()
	for p := 0; p < m.cfg.Partitions; p++ {
		want := owner(p, members) == m.cfg.Instance
		h, holding := m.held[p]
		switch {
		case holding && !want:
			m.release(ctx, p, h.rev)
		case holding:
			sent := m.now()
			nrev, err := m.cfg.KV.Update(ctx, partitionKey(p), []byte(m.cfg.Instance), h.rev)
			if err != nil {
				if ctx.Err() != nil {
					return nil // a deadline or shutdown: fence decides
				}
				m.cfg.Logger.Warn("lease lost", "partition", p, "err", err)
				m.drop(p)
				m.cfg.Lost(p)
				continue
			}
			// Even if this returns after the deadline (Holds refused
			// writes meanwhile), the revision check proves nobody else
			// held the key since our last write: the lease is ours again.
			m.hold(p, held{rev: nrev, valid: sent.Add(m.cfg.TTL - m.margin())})
		case want:
			sent := m.now()
			rev, err := m.cfg.KV.Create(ctx, partitionKey(p), []byte(m.cfg.Instance))
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				continue // still held by its previous owner until released or expired
			}
			m.hold(p, held{rev: rev, valid: sent.Add(m.cfg.TTL - m.margin())})
			m.cfg.Acquired(p)
			acquired++
		}
	}
	return nil
}

func (m *Manager) members(ctx context.Context) ([]string, error) {
	lister, err := m.cfg.KV.ListKeysFiltered(ctx, "m.*")
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return []string{m.cfg.Instance}, nil
		}
		return nil, fmt.Errorf("list members: %w", err)
	}
	var members []string
	for k := range lister.Keys() {
		members = append(members, strings.TrimPrefix(k, "m."))
	}
	if !slices.Contains(members, m.cfg.Instance) {
		members = append(members, m.cfg.Instance)
	}
	return members, nil
}

func (m *Manager) release(ctx context.Context, p int, rev uint64) {
	if h, ok := m.held[p]; ok && !m.now().Before(h.valid) {
		// Past its deadline: the key may be another's now; fence counts it.
		m.fence()
		return
	}
	m.drop(p)
	m.cfg.Lost(p)
	if err := m.cfg.KV.Delete(ctx, partitionKey(p), jetstream.LastRevision(rev)); err != nil {
		m.cfg.Logger.Debug("lease release", "partition", p, "err", err)
	}
}

// releaseAll gives up every lease and the membership on shutdown.
func (m *Manager) releaseAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ps := make([]int, 0, len(m.held))
	for p := range m.held {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		m.release(ctx, p, m.held[p].rev)
	}
	_ = m.cfg.KV.Delete(ctx, memberKey(m.cfg.Instance))
}

// Held returns the partitions held, sorted. Only safe to call from the
// Acquired and Lost callbacks or after Run returned.
func (m *Manager) Held() []int {
	ps := make([]int, 0, len(m.held))
	for p := range m.held {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// owner picks the member with the highest hash of (partition, member):
// rendezvous hashing moves only the partitions of a member that joins or leaves.
func owner(p int, members []string) string {
	var best string
	var bestScore uint64
	for _, mem := range members {
		h := fnv.New64a()
		h.Write([]byte(strconv.Itoa(p)))
		h.Write([]byte{0})
		h.Write([]byte(mem))
		if s := mix(h.Sum64()); best == "" || s > bestScore || (s == bestScore && mem < best) {
			best, bestScore = mem, s
		}
	}
	return best
}

// mix is splitmix64's finaliser: FNV alone spreads short keys poorly.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func memberKey(instance string) string { return "m." + instance }
func partitionKey(p int) string        { return "p." + strconv.Itoa(p) }
