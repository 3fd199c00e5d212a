package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// Job is one summary to write: what a compactor worker receives.
type Job struct {
	// Branch marks a branch summary (Transcript is the abandoned branch);
	// otherwise a compaction.
	Branch bool `json:"branch,omitempty"`
	// Transcript is the serialized history to summarise ([Serialize]).
	Transcript string `json:"transcript"`
	// TurnPrefix is the serialized prefix of a split turn, "" if none.
	TurnPrefix string `json:"turnPrefix,omitempty"`
	// PreviousSummary is folded into the new summary.
	PreviousSummary string `json:"previousSummary,omitempty"`
	// Instructions from the operator, "" if none.
	Instructions string `json:"instructions,omitempty"`
	// MaxTokens caps each summary call's output (0 = the model's limit).
	MaxTokens int64 `json:"maxTokens,omitempty"`
}

// Validate reports a job with nothing to summarise.
func (j *Job) Validate() error {
	if j.Transcript == "" && j.TurnPrefix == "" {
		return &FieldError{Field: "transcript", Problem: "is empty (and there is no turn prefix): nothing to summarise"}
	}
	if j.MaxTokens < 0 {
		return &FieldError{Field: "maxTokens", Problem: fmt.Sprintf("must not be negative, got %d", j.MaxTokens)}
	}
	return nil
}

// Summary is a summary written by a model.
type Summary struct {
	Text  string       `json:"text"`
	Usage events.Usage `json:"usage"` // of every call the summary took
}

// ErrEmptySummary is a model answering a summary call with no text.
var ErrEmptySummary = errors.New("the model answered the summary call with no text")

// Summarize writes the summary of j with model m over p: one call for the
// history (or the branch), one more for a split turn's prefix, merged.
func Summarize(ctx context.Context, p llm.Provider, m llm.Model, j Job) (Summary, error) {
	if err := j.Validate(); err != nil {
		return Summary{}, err
	}
	var out Summary
	call := func(prompt string) (string, error) {
		text, u, err := complete(ctx, p, m, prompt, j.MaxTokens)
		addUsage(&out.Usage, u)
		return text, err
	}
	var history string
	switch {
	case j.Branch:
		s, err := call(BranchPrompt(j.Transcript, j.Instructions))
		if err != nil {
			return out, err
		}
		out.Text = s
		return out, nil
	case j.Transcript != "":
		s, err := call(HistoryPrompt(j.Transcript, j.PreviousSummary, j.Instructions))
		if err != nil {
			return out, err
		}
		history = s
	default:
		history = j.PreviousSummary
	}
	if j.TurnPrefix != "" {
		s, err := call(TurnPrefixPrompt(j.TurnPrefix))
		if err != nil {
			return out, err
		}
		if history != "" {
			history += "\n\n---\n\n"
		}
		history += "**Turn context (split turn):**\n\n" + s
	}
	out.Text = history
	return out, nil
}

func complete(ctx context.Context, p llm.Provider, m llm.Model, prompt string, maxTokens int64) (string, *events.Usage, error) {
	if maxTokens <= 0 || (m.MaxOutput > 0 && maxTokens > m.MaxOutput) {
		maxTokens = m.MaxOutput
	}
	req := &llm.Request{Model: m, SystemPrompt: SystemPrompt, MaxTokens: maxTokens,
		Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent(prompt)}}}
	msg, err := p.Stream(ctx, req, func(events.Delta) {})
	if err != nil {
		return "", msg.Usage, fmt.Errorf("summary call to %s: %w", m.Ref(), err)
	}
	if msg.StopReason == events.StopError || msg.StopReason == events.StopAborted {
		return "", msg.Usage, fmt.Errorf("summary call to %s ended with %s: %s", m.Ref(), msg.StopReason, msg.ErrorMessage)
	}
	text := strings.TrimSpace(msg.Content.Text())
	if text == "" {
		return "", msg.Usage, fmt.Errorf("summary call to %s: %w", m.Ref(), ErrEmptySummary)
	}
	return text, msg.Usage, nil
}

func addUsage(sum *events.Usage, u *events.Usage) {
	if u == nil {
		return
	}
	sum.Input += u.Input
	sum.Output += u.Output
	sum.CacheRead += u.CacheRead
	sum.CacheWrite += u.CacheWrite
	sum.TotalTokens += u.TotalTokens
	sum.Cost.Input += u.Cost.Input
	sum.Cost.Output += u.Cost.Output
	sum.Cost.CacheRead += u.Cost.CacheRead
	sum.Cost.CacheWrite += u.Cost.CacheWrite
	sum.Cost.Total += u.Cost.Total
}
