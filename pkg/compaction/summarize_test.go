package compaction_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
)

// recorder is a provider that keeps the requests it passes on.
type recorder struct {
	llm.Provider
	reqs []*llm.Request
}

func (r *recorder) Stream(ctx context.Context, req *llm.Request, f func(events.Delta)) (events.Message, error) {
	r.reqs = append(r.reqs, req)
	return r.Provider.Stream(ctx, req, f)
}

func scriptedProvider(t *testing.T, script string) (*recorder, llm.Model) {
	t.Helper()
	s, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	p := scripted.New(s)
	return &recorder{Provider: p}, p.Model("m")
}

const summaryScript = `{"defaults":{"maxOutput":500},"rules":[
 {"match":{"contains":"first part of one turn"},"reply":{"text":"prefix summary","usage":{"input":100,"output":10}}},
 {"match":{"contains":"<previous-summary>"},"reply":{"text":"updated summary","usage":{"input":300,"output":30}}},
 {"match":{"contains":"branch the user is leaving"},"reply":{"text":"branch summary","usage":{"input":50,"output":5}}},
 {"match":{"contains":"<conversation>"},"reply":{"text":"fresh summary","usage":{"input":200,"output":20}}}]}`

func TestSummarizeMergesASplitTurnAndRecordsUsage(t *testing.T) {
	p, m := scriptedProvider(t, summaryScript)
	s, err := compaction.Summarize(context.Background(), p, m, compaction.Job{
		Transcript: "[User]: hi", TurnPrefix: "[User]: big", PreviousSummary: "old", Instructions: "be brief", MaxTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	want := "updated summary\n\n---\n\n**Turn context (split turn):**\n\nprefix summary"
	if s.Text != want || s.Usage.Input != 400 || s.Usage.Output != 40 {
		t.Fatalf("summary = %q, usage = %+v", s.Text, s.Usage)
	}
	if len(p.reqs) != 2 || p.reqs[0].MaxTokens != 500 || p.reqs[0].SystemPrompt != compaction.SystemPrompt ||
		!strings.Contains(p.reqs[0].Messages[0].Content.Text(), "be brief") {
		t.Fatalf("requests: %d, first MaxTokens %d (want the model's 500)", len(p.reqs), p.reqs[0].MaxTokens)
	}
}

func TestSummarizeOnlyATurnPrefixKeepsThePreviousSummary(t *testing.T) {
	p, m := scriptedProvider(t, summaryScript)
	s, err := compaction.Summarize(context.Background(), p, m, compaction.Job{TurnPrefix: "[User]: big", PreviousSummary: "old", MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if s.Text != "old\n\n---\n\n**Turn context (split turn):**\n\nprefix summary" || len(p.reqs) != 1 || p.reqs[0].MaxTokens != 100 {
		t.Fatalf("summary = %q after %d calls", s.Text, len(p.reqs))
	}
}

func TestSummarizeABranch(t *testing.T) {
	p, m := scriptedProvider(t, summaryScript)
	s, err := compaction.Summarize(context.Background(), p, m, compaction.Job{Branch: true, Transcript: "[User]: try B"})
	if err != nil || s.Text != "branch summary" {
		t.Fatalf("summary = %q, %v", s.Text, err)
	}
}

func TestSummarizeErrors(t *testing.T) {
	p, m := scriptedProvider(t, `{"rules":[{"match":{"contains":"overload"},"reply":{"error":{"status":529,"message":"overloaded"}}},{"reply":{"text":"  "}}]}`)
	ctx := context.Background()
	var fe *compaction.FieldError
	if _, err := compaction.Summarize(ctx, p, m, compaction.Job{}); !errors.As(err, &fe) || fe.Field != "transcript" {
		t.Fatalf("empty job: %v", err)
	}
	if _, err := compaction.Summarize(ctx, p, m, compaction.Job{Transcript: "overload"}); llm.KindOf(err) != llm.KindRetryable {
		t.Fatalf("provider error: %v (kind %v)", err, llm.KindOf(err))
	}
	if _, err := compaction.Summarize(ctx, p, m, compaction.Job{Transcript: "x"}); !errors.Is(err, compaction.ErrEmptySummary) {
		t.Fatalf("blank answer: %v", err)
	}
}
