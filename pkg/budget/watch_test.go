package budget_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/budget"
)

// While Run runs, Limits answers from the watch of the limits bucket (no
// key read per call): limits stored before Run and changed by another
// process afterwards are seen, its own changes at once, and after Run
// ends Limits reads the key again.
func TestLimitsAreWatchedWhileRunning(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	l, other := open(t, js, "o1", newClock()), open(t, js, "", newClock())
	first := budget.Limits{TokensPerDay: 100}
	if err := other.SetLimits(ctx, "acme", first); err != nil {
		t.Fatal(err)
	}
	stop := kittest.Run(t, ctx, "ledger", l.Run)
	kittest.Eventually(t, 10*time.Second, "the watch answers", l.Watching)

	// A cancelled context would fail any read: the answer is the watch's.
	dead, cancel := context.WithCancel(ctx)
	cancel()
	if got, err := l.Limits(dead, "acme"); err != nil || got != first {
		t.Fatalf("limits from the watch: %+v, %v; want %+v", got, err, first)
	}
	if got, err := l.Limits(dead, "none"); err != nil || !got.IsZero() {
		t.Fatalf("a tenant without limits from the watch: %+v, %v", got, err)
	}
	second := budget.Limits{TokensPerDay: 200, ConcurrentRuns: 1}
	if err := other.SetLimits(ctx, "acme", second); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 10*time.Second, "another process's change", func() error {
		if got, err := l.Limits(dead, "acme"); err != nil || got != second {
			return fmt.Errorf("limits %+v, %v", got, err)
		}
		return nil
	})
	own := budget.Limits{CostPerDay: 1.5}
	if err := l.SetLimits(ctx, "beta", own); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Limits(dead, "beta"); err != nil || got != own {
		t.Fatalf("its own change at once: %+v, %v; want %+v", got, err, own)
	}

	stop()
	if l.Watching() {
		t.Fatal("the watch still answers after Run ended")
	}
	if _, err := l.Limits(dead, "acme"); err == nil {
		t.Error("after Run, Limits answered a cancelled context: it did not read the key")
	}
	if got, err := l.Limits(ctx, "acme"); err != nil || got != second {
		t.Errorf("after Run, the key: %+v, %v; want %+v", got, err, second)
	}
}

// A refusal by limits from the watch is confirmed by the stored key: a
// tenant admin who raised the budget elsewhere and prompts before the
// watch delivers the change is admitted; a refusal the key agrees with
// stands.
func TestStaleWatchedLimitsDoNotRefuse(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	c := newClock()
	l, admin := open(t, js, "o1", c), open(t, js, "", c)
	low := budget.Limits{TokensPerDay: 100, ConcurrentRuns: 1}
	if err := admin.SetLimits(ctx, "acme", low); err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(ctx, "acme", "s1", low, budget.Amount{Tokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, r, budget.Amount{Tokens: 120}); err != nil {
		t.Fatal(err)
	}
	l.PretendWatching(map[string]budget.Limits{"acme": low})
	if err := l.Check(ctx, "acme", "s1"); !errors.Is(err, budget.ErrExceeded) {
		t.Fatalf("over the stored limit: Check = %v, want exceeded", err)
	}
	if err := admin.SetLimits(ctx, "acme", budget.Limits{TokensPerDay: 10000, ConcurrentRuns: 1}); err != nil {
		t.Fatal(err)
	}
	// The cache still says 100.
	if got, _ := l.Limits(ctx, "acme"); got != low {
		t.Fatalf("the planted cache: %+v", got)
	}
	if err := l.Check(ctx, "acme", "s1"); err != nil {
		t.Fatalf("raised elsewhere, not yet watched: Check = %v, want admitted", err)
	}
}
