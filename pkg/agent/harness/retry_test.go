package harness_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/tool"
)

func TestRetryBacksOffExponentiallyAndContinues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, `{"rules":[
			{"times":3,"reply":{"error":{"status":529,"message":"overloaded_error"}}},
			{"reply":{"text":"finally"}}]}`, harness.Config{})
		start := time.Now()
		done := f.prompt("hi")
		synctest.Wait() // the run is blocked in its first backoff
		if p := f.h.Phase(); p != harness.PhaseRetry {
			t.Fatalf("phase while waiting = %s", p)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 14*time.Second {
			t.Fatalf("elapsed %v, want 2s + 4s + 8s", d)
		}
		var delays []int64
		for _, ev := range f.rec.of(events.EvRetryStart) {
			delays = append(delays, ev.Retry.DelayMs)
		}
		if len(delays) != 3 || delays[0] != 2000 || delays[1] != 4000 || delays[2] != 8000 {
			t.Fatalf("retry delays = %v, want [2000 4000 8000]", delays)
		}
		end := f.rec.of(events.EvRetryEnd)
		if len(end) != 1 || !end[0].Retry.Success {
			t.Fatalf("retry end = %+v", end)
		}
		got := summary(f.sess.Entries())
		if got != "user:hi | assistant::error | assistant::error | assistant::error | assistant:finally:stop" {
			t.Fatalf("session: %s", got)
		}
	})
}

// The time a retried prompt takes is the backoff it waited, to the
// nanosecond under synctest's fake clock.
func TestRetryWaits(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		cfg          harness.Config
		want         time.Duration
	}{
		{"the backoff: 100ms then 200ms", `{"rules":[
			{"times":2,"reply":{"error":{"status":503,"message":"unavailable"}}},
			{"reply":{"text":"ok"}}]}`, harness.Config{Retry: harness.RetryPolicy{BaseDelay: 100 * time.Millisecond}}, 300 * time.Millisecond},
		{"the provider's retry-after", `{"rules":[
			{"times":1,"reply":{"error":{"status":429,"message":"rate_limit_error","retryAfterMs":30000}}},
			{"reply":{"text":"ok"}}]}`, harness.Config{}, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, tc.script, tc.cfg)
				start := time.Now()
				if err := f.h.Prompt(context.Background(), user("hi")); err != nil {
					t.Fatal(err)
				}
				if d := time.Since(start); d != tc.want {
					t.Fatalf("waited %v, want %v", d, tc.want)
				}
			})
		})
	}
}

func TestRetryGivesUpAfterMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, `{"rules":[{"reply":{"error":{"status":500,"message":"internal"}}}]}`, harness.Config{})
		err := f.h.Prompt(context.Background(), user("hi"))
		if !errors.Is(err, llm.ErrRetryable) || !strings.Contains(err.Error(), "after 3 retries") {
			t.Fatalf("err = %v", err)
		}
		if f.p.Calls() != 4 {
			t.Fatalf("calls = %d, want 1 + 3 retries", f.p.Calls())
		}
		if end := f.rec.of(events.EvRetryEnd); len(end) != 1 || end[0].Retry.Success {
			t.Fatalf("retry end = %+v", end)
		}
		if f.h.Phase() != harness.PhaseIdle {
			t.Fatalf("phase = %s", f.h.Phase())
		}
	})
}

func TestAbortCancelsTheRetryWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, `{"rules":[{"times":1,"reply":{"error":{"status":529,"message":"overloaded"}}},{"reply":{"text":"never"}}]}`, harness.Config{})
		start := time.Now()
		done := f.prompt("hi")
		synctest.Wait()
		if f.h.Phase() != harness.PhaseRetry {
			t.Fatalf("phase = %s", f.h.Phase())
		}
		f.h.Abort()
		if err := <-done; !errors.Is(err, llm.ErrAborted) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("the wait was not cancelled: %v", d)
		}
		if got := summary(f.sess.Entries()); got != "user:hi | assistant::error | assistant::aborted" {
			t.Fatalf("session: %s", got)
		}
		if f.p.Calls() != 1 {
			t.Fatalf("calls = %d", f.p.Calls())
		}
	})
}

func compactor(calls *int) harness.Compactor {
	return func(_ context.Context, req harness.CompactRequest) (harness.Compaction, error) {
		*calls++
		// keep the last user message
		keep := ""
		for _, e := range req.Path {
			if e.Type == events.EntryMessage && e.Message.Role == events.RoleUser {
				keep = e.ID
			}
		}
		return harness.Compaction{Summary: "earlier talk", FirstKeptEntryID: keep, TokensBefore: 1234}, nil
	}
}

func TestOverflowCompactsThenRetriesOnce(t *testing.T) {
	calls := 0
	f := newFixture(t, `{"rules":[
		{"match":{"contains":"big"},"times":1,"reply":{"error":{"status":400,"message":"prompt is too long: 250000 tokens > 200000 maximum"}}},
		{"reply":{"text":"fits now"}}]}`, harness.Config{Compactor: compactor(&calls)})
	var first string
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		first = ev.Request.Messages[0].Content.Text()
		return hook.RequestPatch{}, nil
	})
	if err := f.h.Prompt(context.Background(), user("something big")); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !strings.Contains(first, "earlier talk") {
		t.Fatalf("compactions = %d, first message of the retry = %q", calls, first)
	}
	if s := f.rec.of(events.EvCompactionEnd); len(s) != 1 || s[0].Compaction.Reason != "overflow" || s[0].Compaction.EntryID == "" {
		t.Fatalf("compaction events = %+v", s)
	}
	if got := summary(f.sess.Entries()); got != "user:something big | assistant::error | compaction | assistant:fits now:stop" {
		t.Fatalf("session: %s", got)
	}
}

func TestSecondOverflowEndsTheRunWithAClearError(t *testing.T) {
	calls := 0
	f := newFixture(t, `{"rules":[{"reply":{"error":{"status":400,"message":"context_length_exceeded"}}}]}`, harness.Config{Compactor: compactor(&calls)})
	err := f.h.Prompt(context.Background(), user("hi"))
	if !errors.Is(err, harness.ErrOverflow) || !errors.Is(err, llm.ErrContextOverflow) {
		t.Fatalf("err = %v", err)
	}
	if calls != 1 || f.p.Calls() != 2 {
		t.Fatalf("compactions = %d, calls = %d; want 1 and 2", calls, f.p.Calls())
	}
	if f.h.Phase() != harness.PhaseIdle {
		t.Fatalf("phase = %s", f.h.Phase())
	}
}

func TestOverflowWithoutCompactorEndsTheRun(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"error":{"status":400,"message":"prompt is too long"}}}]}`, harness.Config{})
	if err := f.h.Prompt(context.Background(), user("hi")); !errors.Is(err, harness.ErrNoCompactor) || f.p.Calls() != 1 {
		t.Fatalf("err = %v, calls = %d", err, f.p.Calls())
	}
}

func TestThresholdCompactionAtTheSavePoint(t *testing.T) {
	calls := 0
	f := newFixture(t, `{"defaults":{"contextWindow":10000},"rules":[
		{"match":{"lastRole":"user","contains":"go"},"reply":{"toolCalls":[{"id":"t1","name":"t"}],"usage":{"input":9000,"output":10}}},
		{"reply":{"text":"after","usage":{"input":100,"output":10}}}]}`,
		harness.Config{Compactor: compactor(&calls), ReserveTokens: 2000},
		newTool("t", func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("out"), nil }))
	var first []string
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		first = append(first, ev.Request.Messages[0].Content.Text())
		return hook.RequestPatch{}, nil
	})
	if err := f.h.Prompt(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(first) != 2 || !strings.Contains(first[1], "earlier talk") {
		t.Fatalf("compactions = %d, first messages of the calls = %q", calls, first)
	}
	if ev := f.rec.of(events.EvCompactionEnd); len(ev) != 1 || ev[0].Compaction.Reason != "threshold" {
		t.Fatalf("compaction events = %+v", ev)
	}
	want := "user:go | assistant::toolUse | toolResult:out | compaction | assistant:after:stop"
	if got := summary(f.sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
}

func TestAbortDuringTheModelCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, `{"rules":[{"reply":{"text":"slow answer","delayMs":60000}}]}`, harness.Config{})
		f.h.FollowUp(user("queued"))
		start := time.Now()
		done := f.prompt("hi")
		synctest.Wait()
		ab := f.h.Abort()
		if err := <-done; !errors.Is(err, llm.ErrAborted) {
			t.Fatalf("err = %v", err)
		}
		if time.Since(start) != 0 || len(ab.FollowUp) != 1 {
			t.Fatalf("elapsed %v, aborted %+v", time.Since(start), ab)
		}
		if got := summary(f.sess.Entries()); got != "user:hi | assistant::aborted" {
			t.Fatalf("session: %s", got)
		}
	})
}
