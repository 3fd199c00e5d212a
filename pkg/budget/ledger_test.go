package budget_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/nats-io/nats.go/jetstream"
)

// clock is a settable clock for holds and days.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Date(2025, 3, 1, 23, 0, 0, 0, time.UTC).UnixMilli())
	return c
}
func (c *clock) now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *clock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func open(t testing.TB, js jetstream.JetStream, owner string, c *clock) *budget.Ledger {
	t.Helper()
	l, err := budget.Open(context.Background(), js, budget.Options{Owner: owner, HoldTTL: 30 * time.Second, Wait: time.Millisecond, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestReserveSettleAndDays(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	c := newClock()
	l := open(t, js, "o1", c)
	ctx := context.Background()
	lim := budget.Limits{TokensPerDay: 1000, CostPerDay: 1}
	if err := l.SetLimits(ctx, "acme", lim); err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(ctx, "acme", "s1", lim, budget.Amount{Tokens: 800, Cost: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.Status(ctx, "acme")
	if err != nil || st.Today.ReservedTokens != 800 || st.Today.Day != "2025-03-01" {
		t.Fatalf("status with a reservation: %+v, %v", st.Today, err)
	}
	// Below the limit counting reservations: admitted.
	r2, err := l.Reserve(ctx, "acme", "s2", lim, budget.Amount{Tokens: 300})
	if err != nil {
		t.Fatal(err)
	}
	// Spent only by reservations: refused after the wait, saying so.
	_, err = l.Reserve(ctx, "acme", "s3", lim, budget.Amount{Tokens: 10})
	var ex *budget.Exceeded
	if !errors.As(err, &ex) || err.Error() != "budget exceeded: tokensPerDay 1000 used 0 reserved 1100 of tenant acme" {
		t.Fatalf("over by reservations: %v", err)
	}
	if err := l.Settle(ctx, r2, budget.Amount{}); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, r, budget.Amount{Tokens: 1200, Cost: 0.2}); err != nil {
		t.Fatal(err)
	}
	_, err = l.Reserve(ctx, "acme", "s3", lim, budget.Amount{Tokens: 10})
	if !errors.As(err, &ex) || ex.Limit != budget.LimitTokens || ex.Used != 1200 {
		t.Fatalf("over by settled use: %v", err)
	}
	if err := l.Check(ctx, "acme", "s3"); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("check over budget: %v", err)
	}
	// Another tenant is not touched.
	if _, err := l.Reserve(ctx, "beta", "s9", lim, budget.Amount{Tokens: 10}); err != nil {
		t.Errorf("another tenant: %v", err)
	}
	// Days are UTC: an hour later is the next day, with nothing used.
	c.add(time.Hour)
	if err := l.Check(ctx, "acme", "s3"); err != nil {
		t.Errorf("check on the next day: %v", err)
	}
	st, err = l.Status(ctx, "acme")
	if err != nil || st.Today.Day != "2025-03-02" || st.Today.Tokens != 0 {
		t.Errorf("next day: %+v, %v", st.Today, err)
	}
}

func TestCostLimitAndErrorRelease(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	l := open(t, js, "o1", newClock())
	ctx := context.Background()
	lim := budget.Limits{CostPerDay: 0.5}
	r, err := l.Reserve(ctx, "acme", "s1", lim, budget.Amount{Tokens: 100, Cost: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	// A failed call settles what its reply used (here nothing): the
	// reservation is released.
	if err := l.Settle(ctx, r, budget.Amount{}); err != nil {
		t.Fatal(err)
	}
	st, _ := l.Status(ctx, "acme")
	if st.Today.ReservedCost != 0 || st.Today.Cost != 0 || st.Today.Calls != 1 {
		t.Errorf("after a failed call: %+v", st.Today)
	}
	r, _ = l.Reserve(ctx, "acme", "s1", lim, budget.Amount{Cost: 0.1})
	if err := l.Settle(ctx, r, budget.Amount{Cost: 0.6}); err != nil {
		t.Fatal(err)
	}
	_, err = l.Reserve(ctx, "acme", "s1", lim, budget.Amount{Cost: 0.01})
	if err == nil || err.Error() != "budget exceeded: costPerDay 0.5 used 0.6 of tenant acme" {
		t.Errorf("over the cost limit: %v", err)
	}
}

// TestHoldsOfADeadOwnerLapse: the reservation and run slot of an owner
// that stops renewing stop counting after the hold TTL; a live owner's
// renewed ones do not.
func TestHoldsOfADeadOwnerLapse(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	c := newClock()
	dead, live := open(t, js, "dead", c), open(t, js, "live", c)
	ctx := context.Background()
	lim := budget.Limits{TokensPerDay: 1000, ConcurrentRuns: 2}
	if err := dead.Acquire(ctx, "acme", "s1", lim); err != nil {
		t.Fatal(err)
	}
	if _, err := dead.Reserve(ctx, "acme", "s1", lim, budget.Amount{Tokens: 900}); err != nil {
		t.Fatal(err)
	}
	if err := live.Acquire(ctx, "acme", "s2", lim); err != nil {
		t.Fatal(err)
	}
	if err := live.Acquire(ctx, "acme", "s3", lim); !errors.Is(err, budget.ErrExceeded) {
		t.Fatalf("a third run with two slots held: %v", err)
	}
	c.add(20 * time.Second)
	live.RenewNow(ctx)
	c.add(20 * time.Second) // dead's holds are 40 s old, live's 20 s
	st, err := live.Status(ctx, "acme")
	if err != nil || st.Today.Runs != 1 || st.Today.ReservedTokens != 0 {
		t.Fatalf("after the dead owner's TTL: %+v, %v; want live's one run, nothing reserved", st.Today, err)
	}
	if err := live.Acquire(ctx, "acme", "s3", lim); err != nil {
		t.Errorf("the lapsed slot is not reclaimed: %v", err)
	}
	// The live owner releases its own, never another's.
	if err := dead.Release(ctx, "acme", "s2"); err != nil {
		t.Fatal(err)
	}
	if st, _ := live.Status(ctx, "acme"); st.Today.Runs != 2 {
		t.Errorf("another owner's release took a slot: %+v", st.Today)
	}
	for _, sid := range []string{"s2", "s3"} {
		if err := live.Release(ctx, "acme", sid); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := live.Status(ctx, "acme"); st.Today.Runs != 0 {
		t.Errorf("after releasing: %+v", st.Today)
	}
}

// TestConcurrentReservationsCompareAndSet: owners racing on one key lose
// no update: every settled call is counted once.
func TestConcurrentReservationsCompareAndSet(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	c := newClock()
	ledgers := []*budget.Ledger{open(t, js, "a", c), open(t, js, "b", c), open(t, js, "c", c)}
	ctx := context.Background()
	const perSession = 10
	var wg sync.WaitGroup
	errs := make(chan error, 12*perSession)
	for i := range 12 {
		wg.Go(func() {
			l := ledgers[i%len(ledgers)]
			sid := fmt.Sprintf("s%d", i)
			for range perSession {
				r, err := l.Reserve(ctx, "acme", sid, budget.Limits{}, budget.Amount{Tokens: 50})
				if err == nil {
					err = l.Settle(ctx, r, budget.Amount{Tokens: 7, Cost: 0.001})
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := ledgers[0].Status(ctx, "acme")
	if err != nil || st.Today.Tokens != 12*perSession*7 || st.Today.Calls != 12*perSession || st.Today.ReservedTokens != 0 {
		t.Errorf("after the race: %+v, %v", st.Today, err)
	}
}

func TestLimitsStored(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	l := open(t, js, "", newClock())
	if err := l.SetLimits(ctx, "Bad.Tenant", budget.Limits{}); err == nil {
		t.Error("a bad tenant name was stored")
	}
	if err := l.SetLimits(ctx, "acme", budget.Limits{TokensPerDay: -1}); err == nil {
		t.Error("a negative limit was stored")
	}
	want := budget.Limits{TokensPerDay: 5, CostPerDay: 0.25, ConcurrentRuns: 2}
	if err := l.SetLimits(ctx, "acme", want); err != nil {
		t.Fatal(err)
	}
	// Another process, opened afterwards, reads the same.
	got, err := open(t, js, "", newClock()).Limits(ctx, "acme")
	if err != nil || got != want {
		t.Errorf("limits read back: %+v, %v", got, err)
	}
	if got, err := l.Limits(ctx, "none"); err != nil || !got.IsZero() {
		t.Errorf("a tenant with no budget: %+v, %v", got, err)
	}
}

// BenchmarkReserveSettle is the ledger's cost per model call: reserve
// then settle (two reads of limits and day key, two compare-and-sets).
func BenchmarkReserveSettle(b *testing.B) {
	srv := natstest.RunServer(b)
	_, js := natstest.JetStream(b, srv.Server)
	l, err := budget.Open(context.Background(), js, budget.Options{Owner: "o"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := l.SetLimits(ctx, "acme", budget.Limits{TokensPerDay: budget.MaxTokensPerDay}); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		lim, err := l.Limits(ctx, "acme")
		if err != nil {
			b.Fatal(err)
		}
		r, err := l.Reserve(ctx, "acme", "s1", lim, budget.Amount{Tokens: 1000})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Settle(ctx, r, budget.Amount{Tokens: 900}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}
