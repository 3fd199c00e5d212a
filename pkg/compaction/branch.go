package compaction

import (
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
)

// AbandonedBranch returns the entries of from (the path being left, root
// to old leaf) after its deepest common ancestor with to (the path of the
// navigation's target, root to target; empty when navigating to before the
// first entry). Nothing is abandoned when the old leaf is on the target's
// path.
func AbandonedBranch(from, to []events.Entry) []events.Entry {
	common := 0
	for common < len(from) && common < len(to) && from[common].ID == to[common].ID {
		common++
	}
	return from[common:]
}

// BranchJob returns the summary job of an abandoned branch, and
// ErrNothingToCompact when the branch holds no message. Its messages are
// what its entries contribute to a context (sessiontree.Messages).
func BranchJob(branch []events.Entry, instructions string, s Settings, modelMaxOutput int64) (Job, error) {
	msgs, err := sessiontree.Messages(branch)
	if err != nil {
		return Job{}, fmt.Errorf("compaction: %w", err)
	}
	t := Serialize(msgs)
	if t == "" {
		return Job{}, ErrNothingToCompact
	}
	return Job{Branch: true, Transcript: t, Instructions: instructions, MaxTokens: s.MaxSummaryTokens(modelMaxOutput)}, nil
}
