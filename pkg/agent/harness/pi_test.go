package harness_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// The rules where the harness follows pi's (issue 24), one test each.

func TestToolSetsWithARepeatedNameAreRefused(t *testing.T) {
	ls := func() tool.Tool { return newTool("ls", nil) }
	sc := `{"rules":[{"reply":{"text":"ok"}}]}`
	f := newFixture(t, sc, harness.Config{}, ls())
	_, err := harness.New(context.Background(), harness.Config{Session: f.sess, Providers: map[string]llm.Provider{"scripted": f.p},
		Model: f.p.Model("one"), Tools: []tool.Tool{ls(), newTool("read", nil), ls()}})
	if !errors.Is(err, harness.ErrDuplicateTool) || !strings.Contains(err.Error(), `tools[2]: duplicate tool name "ls" (tools[0] already names it)`) {
		t.Fatalf("New with a repeated tool: %v", err)
	}
	before := len(f.sess.Entries())
	err = f.h.SetTools(context.Background(), []tool.Tool{newTool("read", nil), ls(), ls()})
	if !errors.Is(err, harness.ErrDuplicateTool) || !strings.Contains(err.Error(), `duplicate tool name "ls"`) || len(f.sess.Entries()) != before {
		t.Fatalf("SetTools with a repeated tool: %v; %d entries, had %d", err, len(f.sess.Entries()), before)
	}
}

func TestNavigationFollowsPi(t *testing.T) {
	f := newFixture(t, `{"rules":[{"reply":{"text":"ok"}}]}`, harness.Config{})
	ctx := context.Background()
	for _, s := range []string{"first question", "second question"} {
		if err := f.h.Prompt(ctx, user(s)); err != nil {
			t.Fatal(err)
		}
	}
	es := f.sess.Entries() // user, assistant, user, assistant
	firstUser, firstReply, secondUser, secondReply := es[0].ID, es[1].ID, es[2].ID, es[3].ID

	// To the current leaf: nothing happens, nothing is written.
	nav, err := f.h.Navigate(ctx, &secondReply, harness.NavigateOptions{Summarize: true})
	if err != nil || !nav.Unchanged || nav.Leaf == nil || *nav.Leaf != secondReply || len(f.sess.Entries()) != 4 {
		t.Fatalf("navigate to the leaf: %+v, %v; %d entries", nav, err, len(f.sess.Entries()))
	}
	// To a user message: the leaf is its parent, its text comes back.
	nav, err = f.h.Navigate(ctx, &secondUser, harness.NavigateOptions{})
	if err != nil || nav.Unchanged || nav.EditorText != "second question" || nav.Leaf == nil || *nav.Leaf != firstReply {
		t.Fatalf("navigate to a user message: %+v, %v", nav, err)
	}
	leaf := f.sess.Entries()[4]
	if leaf.Type != events.EntryLeaf || *leaf.TargetID != firstReply || leaf.LeafSelected() != secondUser {
		t.Fatalf("leaf entry %+v (selected %q)", leaf, leaf.LeafSelected())
	}
	if msgs := f.h.Messages(); len(msgs) != 2 || msgs[1].Content.Text() != "ok" {
		t.Fatalf("context after navigating to a user message: %+v", msgs)
	}
	// To the first user message: before the first entry.
	nav, err = f.h.Navigate(ctx, &firstUser, harness.NavigateOptions{})
	if err != nil || nav.Leaf != nil || nav.EditorText != "first question" || len(f.h.Messages()) != 0 {
		t.Fatalf("navigate to the first message: %+v, %v, context %d", nav, err, len(f.h.Messages()))
	}
	// To an assistant message: it is the leaf; no text comes back.
	nav, err = f.h.Navigate(ctx, &secondReply, harness.NavigateOptions{})
	if err != nil || nav.EditorText != "" || *nav.Leaf != secondReply || len(f.h.Messages()) != 4 {
		t.Fatalf("navigate to an assistant message: %+v, %v", nav, err)
	}
	if last := f.sess.Entries()[len(f.sess.Entries())-1]; last.LeafSelected() != "" || *last.TargetID != secondReply {
		t.Fatalf("leaf entry of an assistant target: %+v", last)
	}
	unknown := "no-such-entry"
	if _, err := f.h.Navigate(ctx, &unknown, harness.NavigateOptions{}); !errors.Is(err, harness.ErrNoEntry) {
		t.Fatalf("navigate to an unknown entry: %v", err)
	}
}

func TestSilentOverflowCompactsWithReasonOverflow(t *testing.T) {
	calls := 0
	f := newFixture(t, `{"defaults":{"contextWindow":10000},"rules":[
		{"reply":{"text":"took it","usage":{"input":10500,"output":10}}}]}`,
		harness.Config{Compactor: compactor(&calls), ReserveTokens: 2000})
	if err := f.h.Prompt(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	ends := f.rec.of(events.EvCompactionEnd)
	if calls != 1 || len(ends) != 1 || ends[0].Compaction.Reason != "overflow" || ends[0].Compaction.WillRetry || ends[0].Compaction.Error != "" {
		t.Fatalf("compactions %d, compaction_end %+v", calls, ends)
	}
	if f.p.Calls() != 1 {
		t.Fatalf("the successful reply was asked for again: %d calls", f.p.Calls())
	}
	if got := summary(f.sess.Entries()); got != "user:hi | assistant:took it:stop | compaction" {
		t.Fatalf("session: %s", got)
	}
}

func TestOverflowRecoveryTellsWhatHappened(t *testing.T) {
	t.Run("one compact-and-retry", func(t *testing.T) {
		calls := 0
		f := newFixture(t, `{"rules":[
			{"match":{"contains":"big"},"times":1,"reply":{"error":{"status":400,"message":"prompt is too long"}}},
			{"reply":{"text":"fits now"}}]}`, harness.Config{Compactor: compactor(&calls)})
		if err := f.h.Prompt(context.Background(), user("something big")); err != nil {
			t.Fatal(err)
		}
		if ends := f.rec.of(events.EvCompactionEnd); len(ends) != 1 || !ends[0].Compaction.WillRetry || ends[0].Compaction.Reason != "overflow" {
			t.Fatalf("compaction_end %+v", ends)
		}
	})
	t.Run("still overflowing", func(t *testing.T) {
		calls := 0
		f := newFixture(t, `{"rules":[{"reply":{"error":{"status":400,"message":"prompt is too long"}}}]}`, harness.Config{Compactor: compactor(&calls)})
		err := f.h.Prompt(context.Background(), user("hi"))
		const want = "context overflow recovery failed after one compact-and-retry attempt"
		if !errors.Is(err, harness.ErrOverflow) || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("err = %v", err)
		}
		checkEnding(t, f, want, "user:hi | assistant::error | compaction | assistant::error | assistant::error")
		ends := f.rec.of(events.EvCompactionEnd)
		if len(ends) != 2 || !ends[0].Compaction.WillRetry || ends[1].Compaction.WillRetry || ends[1].Compaction.Error != err.Error() {
			t.Fatalf("compaction_end events %+v", ends)
		}
	})
	t.Run("nothing to compact", func(t *testing.T) {
		f := newFixture(t, `{"rules":[{"reply":{"error":{"status":400,"message":"prompt is too long"}}}]}`, harness.Config{
			Compactor: func(context.Context, harness.CompactRequest) (harness.Compaction, error) {
				return harness.Compaction{}, compaction.ErrNothingToCompact
			}})
		err := f.h.Prompt(context.Background(), user("hi"))
		if !errors.Is(err, harness.ErrOverflowRecovery) || !errors.Is(err, compaction.ErrNothingToCompact) {
			t.Fatalf("err = %v", err)
		}
		checkEnding(t, f, "context overflow recovery failed: nothing to compact", "user:hi | assistant::error | assistant::error")
		if ends := f.rec.of(events.EvCompactionEnd); len(ends) != 1 || ends[0].Compaction.Error != err.Error() || ends[0].Compaction.WillRetry {
			t.Fatalf("compaction_end events %+v", ends)
		}
	})
}

// checkEnding checks the log, and that its last message is the run's own
// error, starting with want.
func checkEnding(t *testing.T, f *fixture, want, log string) {
	t.Helper()
	es := f.sess.Entries()
	if got := summary(es); got != log {
		t.Fatalf("session: %s\nwant:    %s", got, log)
	}
	last := es[len(es)-1].Message
	if !strings.HasPrefix(last.ErrorMessage, want) || last.Usage != nil {
		t.Fatalf("last message %+v, want an error starting with %q", last, want)
	}
	if ends := f.rec.of(events.EvAgentEnd); len(ends) != 1 {
		t.Fatalf("agent_end events: %d", len(ends))
	}
}

func TestRetryFollowsTheErrorText(t *testing.T) {
	for _, tc := range []struct {
		name, status, message string
		retried               bool
	}{
		{"network failure in a 400", "400", "network_error: Network connection lost.", true},
		{"please retry", "400", "The server had an error processing your request. Please retry your request.", true},
		{"throttling is not an overflow", "400", "Throttling error: Too many tokens, please wait before trying again.", true},
		{"quota on a 429", "429", "insufficient_quota: You exceeded your current quota.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			f := newFixture(t, `{"rules":[
				{"match":{"contains":"go"},"times":1,"reply":{"error":{"status":`+tc.status+`,"message":"`+tc.message+`"}}},
				{"reply":{"text":"ok"}}]}`, harness.Config{Compactor: compactor(&calls), Retry: harness.RetryPolicy{BaseDelay: time.Millisecond}})
			err := f.h.Prompt(context.Background(), user("go"))
			retries := len(f.rec.of(events.EvRetryStart))
			if calls != 0 {
				t.Fatalf("compacted %d times", calls)
			}
			if tc.retried && (err != nil || retries != 1 || f.p.Calls() != 2) {
				t.Fatalf("err %v, %d retries, %d calls; want a retry", err, retries, f.p.Calls())
			}
			if !tc.retried && (!errors.Is(err, llm.ErrQuota) || retries != 0 || f.p.Calls() != 1) {
				t.Fatalf("err %v, %d retries, %d calls; want none", err, retries, f.p.Calls())
			}
		})
	}
}
