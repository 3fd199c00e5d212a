package harness_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
)

// twoTurns is a fixture whose compactor counts its calls in calls, after
// the prompts "one" and "two".
func twoTurns(t *testing.T, calls *int) *fixture {
	t.Helper()
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{Compactor: compactor(calls)})
	for _, s := range []string{"one", "two"} {
		if err := f.h.Prompt(context.Background(), user(s)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestManualCompactionAndItsCancelHook(t *testing.T) {
	calls := 0
	f := twoTurns(t, &calls)
	ctx := context.Background()
	off := hook.On(f.h.Hooks(), func(_ context.Context, ev hook.SessionBeforeCompactEvent) (hook.CompactDecision, error) {
		return hook.CompactDecision{Cancel: ev.Reason == "manual", Reason: "not now"}, nil
	})
	before := len(f.sess.Entries())
	if err := f.h.Compact(ctx, ""); !errors.Is(err, harness.ErrCancelled) || calls != 0 || len(f.sess.Entries()) != before {
		t.Fatalf("cancelled compaction: err=%v calls=%d", err, calls)
	}
	off()
	if err := f.h.Compact(ctx, "keep it short"); err != nil {
		t.Fatal(err)
	}
	msgs := f.h.Messages()
	if len(msgs) != 3 || msgs[0].Role != events.RoleCompactionSummary || msgs[1].Content.Text() != "two" {
		t.Fatalf("context after compaction: %+v", msgs)
	}
	if f.h.Phase() != harness.PhaseIdle {
		t.Fatalf("phase = %s", f.h.Phase())
	}
}

func TestNavigateMovesTheLeafWithABranchSummary(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{
		Summarizer: func(_ context.Context, req harness.SummaryRequest) (string, error) {
			return "left a branch of " + string(rune('0'+len(req.Branch))) + " entries", nil
		},
	})
	ctx := context.Background()
	if err := f.h.Prompt(ctx, user("one")); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Prompt(ctx, user("two")); err != nil {
		t.Fatal(err)
	}
	first := f.sess.Entries()[1].ID // the reply to "one"
	off := hook.On(f.h.Hooks(), func(context.Context, hook.SessionBeforeTreeEvent) (hook.Cancel, error) {
		return hook.Cancel{Cancel: true}, nil
	})
	if _, err := f.h.Navigate(ctx, &first, harness.NavigateOptions{}); !errors.Is(err, harness.ErrCancelled) {
		t.Fatalf("cancelled navigation: %v", err)
	}
	off()
	if _, err := f.h.Navigate(ctx, &first, harness.NavigateOptions{Summarize: true}); err != nil {
		t.Fatal(err)
	}
	msgs := f.h.Messages()
	if len(msgs) != 3 || msgs[2].Role != events.RoleBranchSummary || msgs[2].Summary != "left a branch of 4 entries" {
		t.Fatalf("context after navigation: %+v", msgs)
	}
	if err := f.h.Prompt(ctx, user("three")); err != nil {
		t.Fatal(err)
	}
	_, path, _ := f.sess.Path(ctx)
	if got := summary(path); got != "user:one | assistant:ok:stop | branch_summary | user:three | assistant:ok:stop" {
		t.Fatalf("path: %s", got)
	}
}

func TestAbortCancelsAManualCompaction(t *testing.T) {
	started := make(chan struct{})
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{
		Compactor: func(ctx context.Context, _ harness.CompactRequest) (harness.Compaction, error) {
			close(started)
			<-ctx.Done()
			return harness.Compaction{}, ctx.Err()
		},
	})
	if err := f.h.Prompt(context.Background(), user("one")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.h.Compact(context.Background(), "") }()
	<-started
	if f.h.Phase() != harness.PhaseCompaction {
		t.Fatalf("phase = %s", f.h.Phase())
	}
	f.h.Abort()
	if err := wait(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Compact: %v", err)
	}
	if ev := f.rec.of(events.EvCompactionEnd); len(ev) != 1 || !ev[0].Compaction.Aborted {
		t.Fatalf("compaction_end = %+v", ev)
	}
	if f.h.Phase() != harness.PhaseIdle {
		t.Fatalf("phase = %s", f.h.Phase())
	}
}

func TestCompactHookSuppliesItsOwnSummary(t *testing.T) {
	calls := 0
	f := twoTurns(t, &calls)
	ctx := context.Background()
	var seen int
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.SessionBeforeCompactEvent) (hook.CompactDecision, error) {
		seen = len(ev.Path)
		return hook.CompactDecision{Summary: "the hook's own summary"}, nil
	})
	if err := f.h.Compact(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Fatalf("the compactor was called %d times; the hook's summary should replace it", calls)
	}
	es := f.sess.Entries()
	last := es[len(es)-1]
	if last.Type != events.EntryCompaction || last.Summary != "the hook's own summary" || !last.FromHook {
		t.Fatalf("last entry %+v, want the hook's compaction", last)
	}
	if seen != 4 {
		t.Fatalf("the hook saw a path of %d entries, want the 4 messages", seen)
	}
	msgs := f.h.Messages()
	if len(msgs) != 1 || msgs[0].Summary != "the hook's own summary" {
		t.Fatalf("context after the hook's compaction: %+v", msgs)
	}
}
