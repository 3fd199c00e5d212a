package harness

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
)

// The system prompt each model call is sent with is in the session (DESIGN
// §13): with Config.SystemPromptFor, the harness records it as an
// events.CustomSystemPrompt entry before the first model call that uses a
// prompt other than the last one recorded on the branch — at the start of
// a run and at a save point where the builder's prompt changed. A prompt a
// before_agent_start hook gave the run is the one recorded (fromHook), and
// it holds for the whole run: the save points' rebuilds apply from the next
// run on.

// SystemPrompt is a system prompt and the resource versions it was built
// from.
type SystemPrompt struct {
	Text      string
	Resources []events.ResourceVersion
}

// recordedDigest is the digest of the last system prompt recorded on path;
// "" when none is (or its entry does not decode: it is recorded again).
func recordedDigest(path []events.Entry) string {
	r, ok, err := events.LastSystemPrompt(path)
	if !ok || err != nil {
		return ""
	}
	return r.Digest
}

// recordSystemPrompt records the prompt the run's next model call is sent
// with, built or the hook's, unless the branch's last record is that one.
// It runs on the run's goroutine, between model calls.
func (h *Harness) recordSystemPrompt(ctx context.Context, built SystemPrompt) error {
	r := events.SystemPromptRecord{Text: built.Text, Resources: built.Resources}
	if hp := h.run.hookPrompt; hp != nil {
		r.Text, r.FromHook = hp.Text, true
	}
	r.Digest = events.PromptDigest(r.Text)
	h.mu.Lock()
	same := r.Digest == h.mu.recorded
	h.mu.Unlock()
	if same {
		return nil
	}
	h.wmu.Lock()
	stored, err := h.cfg.Session.Append(context.WithoutCancel(ctx), events.SystemPromptEntry(r))
	h.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("harness: record the system prompt: %w", err)
	}
	h.run.lastLeafID = stored.ID
	h.mu.Lock()
	h.mu.recorded = r.Digest
	h.mu.Unlock()
	return nil
}
