package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
)

// While the harness backs off, the log already says the run goes on: a
// retry entry follows the error message, with the attempt and the delay.
func TestTheLogSaysARetryIsComing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, `{"rules":[
			{"times":1,"reply":{"error":{"status":529,"message":"overloaded_error"}}},
			{"reply":{"text":"finally"}}]}`, harness.Config{})
		done := f.prompt("hi")
		synctest.Wait() // blocked in the back-off
		es := f.sess.Entries()
		if got := summary(es); got != "user:hi | assistant::error | retry" {
			t.Fatalf("session while backing off: %s", got)
		}
		r := es[len(es)-1]
		var d struct {
			Attempt int   `json:"attempt"`
			DelayMs int64 `json:"delayMs"`
		}
		if err := json.Unmarshal(r.Details, &d); err != nil || d.Attempt != 1 || d.DelayMs != 2000 ||
			r.Code != events.RetryTransient || r.Reason != es[len(es)-2].Message.ErrorMessage {
			t.Fatalf("retry entry %+v (details %s, %v)", r, r.Details, err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := summary(f.sess.Entries()); got != "user:hi | assistant::error | retry | assistant:finally:stop" {
			t.Fatalf("session: %s", got)
		}
	})
}

// A retry that is never made (the compaction before it failed) is closed
// in the log, with the run's error: the run is settled there too.
func TestARetryNeverMadeIsClosed(t *testing.T) {
	failing := func(context.Context, harness.CompactRequest) (harness.Compaction, error) {
		return harness.Compaction{}, errors.New("the compactor is down")
	}
	f := newFixture(t, `{"rules":[{"reply":{"error":{"status":400,"message":"prompt is too long"}}}]}`, harness.Config{Compactor: failing})
	if err := f.h.Prompt(context.Background(), user("hi")); err == nil {
		t.Fatal("the run did not fail")
	}
	es := f.sess.Entries()
	if got := summary(es); got != "user:hi | assistant::error | retry | turn_interrupted" {
		t.Fatalf("session: %s", got)
	}
	if r := es[2]; r.Code != events.RetryOverflow {
		t.Fatalf("retry entry %+v", r)
	}
	if last := es[3]; !strings.Contains(last.Reason, "the compactor is down") {
		t.Fatalf("closing entry %+v does not say why", last)
	}
}
