package harness_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// While the harness backs off, the log already says the run goes on: the
// error message is recorded with its retry mark (attempt, delay), in the
// same entry, so nothing reading the log sees the error without it.
func TestTheLogSaysARetryIsComing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, `{"rules":[
			{"times":2,"reply":{"error":{"status":529,"message":"overloaded_error"}}},
			{"reply":{"text":"finally"}}]}`, harness.Config{})
		done := f.prompt("hi")
		synctest.Wait() // blocked in the first back-off
		es := f.sess.Entries()
		if got := summary(es); got != "user:hi | assistant::error" {
			f.h.Abort()
			t.Logf("aborted prompt: %v", <-done)
			t.Fatalf("session while backing off: %s", got)
		}
		if r := es[1].Retry; r == nil || *r != (events.RetryMark{Attempt: 1, DelayMs: 2000, Code: events.RetryTransient}) {
			f.h.Abort()
			t.Logf("aborted prompt: %v", <-done)
			t.Fatalf("error message recorded with retry mark %+v", r)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		es = f.sess.Entries()
		if got := summary(es); got != "user:hi | assistant::error | assistant::error | assistant:finally:stop" {
			t.Fatalf("session: %s", got)
		}
		if r := es[2].Retry; r == nil || r.Attempt != 2 || r.DelayMs != 4000 || es[3].Retry != nil {
			t.Fatalf("marks: %+v, %+v", es[2].Retry, es[3].Retry)
		}
	})
}

// An error that is not retried is recorded without a mark: it ends the run.
func TestAnErrorNotRetriedHasNoMark(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"error":{"status":400,"message":"bad request"}}}]}`, harness.Config{})
	if err := f.h.Prompt(context.Background(), user("hi")); err == nil {
		t.Fatal("the run did not fail")
	}
	es := f.sess.Entries()
	if got := summary(es); got != "user:hi | assistant::error" || es[1].Retry != nil {
		t.Fatalf("session: %s, mark %+v", got, es[1].Retry)
	}
	if ends := f.rec.of(events.EvMessageEnd); len(ends) != 2 || ends[1].Message.StopReason != events.StopError {
		t.Fatalf("message_end events: %d", len(ends))
	}
}

// A retry that is never made (the compaction before it failed) is closed
// in the log, with the run's error: the loop's final error message (pi's
// "context overflow recovery failed...") carries no mark, so the run is
// settled there too.
func TestARetryNeverMadeIsClosed(t *testing.T) {
	failing := func(context.Context, harness.CompactRequest) (harness.Compaction, error) {
		return harness.Compaction{}, errors.New("the compactor is down")
	}
	f := newFixture(t, `{"rules":[{"reply":{"error":{"status":400,"message":"prompt is too long"}}}]}`, harness.Config{Compactor: failing})
	if err := f.h.Prompt(context.Background(), user("hi")); err == nil {
		t.Fatal("the run did not fail")
	}
	es := f.sess.Entries()
	if got := summary(es); got != "user:hi | assistant::error | assistant::error" {
		t.Fatalf("session: %s", got)
	}
	if r := es[1].Retry; r == nil || r.Code != events.RetryOverflow {
		t.Fatalf("error message mark %+v", r)
	}
	if last := es[2]; last.Retry != nil || !strings.Contains(last.Message.ErrorMessage, "the compactor is down") {
		t.Fatalf("closing entry %+v (mark %+v) does not end the run saying why", last.Message, last.Retry)
	}
}

// A run's last reply that leaves the context past the threshold is
// recorded with a compaction mark, before the compaction starts: the log
// says the run goes on until the compaction entry that follows it. A reply
// that calls tools is not marked (its run goes on anyway).
func TestAReplyBeforeACompactionIsMarked(t *testing.T) {
	var seen []events.Entry // the log as the compactor found it
	f := newFixture(t, `{"defaults":{"contextWindow":10000},"rules":[
		{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"t1","name":"t"}],"usage":{"input":100,"output":10}}},
		{"reply":{"text":"done","usage":{"input":9000,"output":10}}}]}`,
		harness.Config{ReserveTokens: 2000, Compactor: func(_ context.Context, req harness.CompactRequest) (harness.Compaction, error) {
			seen = req.Path
			return harness.Compaction{Summary: "earlier talk", FirstKeptEntryID: req.Path[len(req.Path)-1].ID}, nil
		}},
		newTool("t", func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("out"), nil }))
	if err := f.h.Prompt(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	es := f.sess.Entries()
	if got, want := summary(es), "user:hi | assistant::toolUse | toolResult:out | assistant:done:stop | compaction"; got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
	if es[1].Retry != nil {
		t.Errorf("the tool call reply is marked %+v", es[1].Retry)
	}
	if r := es[3].Retry; r == nil || *r != (events.RetryMark{Code: events.RetryCompaction}) {
		t.Fatalf("the last reply is marked %+v, want a compaction mark", r)
	}
	if len(seen) == 0 || seen[len(seen)-1].ID != es[3].ID || seen[len(seen)-1].Retry == nil {
		t.Fatalf("the compactor did not find the marked reply last in the log: %s", summary(seen))
	}
	if ev := f.rec.of(events.EvCompactionEnd); len(ev) != 1 || ev[0].Compaction.Reason != "threshold" || ev[0].Compaction.Error != "" {
		t.Fatalf("compaction events = %+v", ev)
	}
}

// A compaction a mark promised that fails is closed with a turn_interrupted
// entry saying why, like a retry never made.
func TestACompactionNeverMadeIsClosed(t *testing.T) {
	f := newFixture(t, `{"defaults":{"contextWindow":10000},"rules":[{"reply":{"text":"done","usage":{"input":9000,"output":10}}}]}`,
		harness.Config{ReserveTokens: 2000, Compactor: func(context.Context, harness.CompactRequest) (harness.Compaction, error) {
			return harness.Compaction{}, errors.New("the compactor is down")
		}})
	if err := f.h.Prompt(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	es := f.sess.Entries()
	if got := summary(es); got != "user:hi | assistant:done:stop | turn_interrupted" {
		t.Fatalf("session: %s", got)
	}
	if r := es[1].Retry; r == nil || r.Code != events.RetryCompaction {
		t.Fatalf("reply mark %+v", r)
	}
	if reason := es[2].Reason; !strings.Contains(reason, "compaction") || !strings.Contains(reason, "the compactor is down") {
		t.Fatalf("closing reason %q", reason)
	}
}
