package compactbus

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// Compact prepares the compaction of path (root to leaf, see
// [compaction.Prepare]), has a worker summarise it with model, and returns
// what the compaction entry records. Nothing to summarise is
// [compaction.ErrNothingToCompact], without a request.
func (c *Client) Compact(ctx context.Context, sid events.SessionRef, path []events.Entry, model llm.Model, s compaction.Settings, reason, instructions string) (compaction.Result, error) {
	p, err := compaction.Prepare(path, s)
	if err != nil {
		return compaction.Result{}, err
	}
	leaf := ""
	if len(path) > 0 {
		leaf = path[len(path)-1].ID
	}
	r, err := c.Summarize(ctx, Request{Tenant: sid.Tenant, SessionID: sid.ID, RequestID: RequestID(sid, "compaction", leaf, instructions),
		Model: model.Ref(), Reason: reason, Job: p.Job(instructions, s, model.MaxOutput)})
	if err != nil {
		return compaction.Result{}, err
	}
	return p.Result(r.Summary), nil
}

// SummarizeBranch has a worker summarise branch, the entries a navigation
// leaves (see [compaction.AbandonedBranch]). A branch without messages is
// [compaction.ErrNothingToCompact].
func (c *Client) SummarizeBranch(ctx context.Context, sid events.SessionRef, branch []events.Entry, model llm.Model, s compaction.Settings, instructions string) (string, error) {
	j, err := compaction.BranchJob(branch, instructions, s, model.MaxOutput)
	if err != nil {
		return "", err
	}
	first, last := branch[0].ID, branch[len(branch)-1].ID
	r, err := c.Summarize(ctx, Request{Tenant: sid.Tenant, SessionID: sid.ID, RequestID: RequestID(sid, "branch", first, last, instructions),
		Model: model.Ref(), Reason: "branch", Job: j})
	if err != nil {
		return "", fmt.Errorf("branch summary: %w", err)
	}
	return r.Summary.Text, nil
}
