package orchestrator

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"
)

// Approvals (DESIGN §11, docs/approvals.md). The harness parks the calls
// the session's policy (or a tool_call hook's ask) holds back and returns
// harness.ErrWaiting; the actor is then waiting: no run goroutine, the
// harness idle, the running mark kept, so that the next owner of the
// partition wakes the session after a crash and arms its expiry again.
// Everything the wait needs is in the log (harness.WaitOf), so a load, a
// restore and a failover all land in waiting again.
//
// approve and deny are answered in the log at once, even while the batch's
// other calls still run; once no request is left, the actor resumes the
// run (waiting → running). abort denies every pending call and resumes
// with the run aborted, so the results are recorded before its aborted
// reply. A request whose expiresAt passes is denied as expired by a timer
// of the actor; a waiting session with such a request is not evicted
// (it shrinks), so that someone is there when it expires.

// Rejection codes of approvals.
const (
	codeUnknownCall = "unknown_call"
	codeAnswered    = "already_answered"
	codeExpired     = "expired"
)

// policy returns the session's approval policy: the last approvals_change
// in its log, else its header's, else its tenant's default (read once per
// harness: a changed default applies from the session's next load); an
// empty policy allows every call.
//
// A default that cannot be read (NATS unavailable, an election) is read
// again after a back-off (handoverWait) until it can be: the call waits for
// its policy as it would for its tool's dispatch. Asking a person because
// NATS was briefly away would park calls no policy asked for. Only ctx
// ending first (the run aborted or handed over) decides without it, and
// then fails closed: the call asks, and the guess is not kept.
func (a *actor) policy(ctx context.Context) *events.Approvals {
	if p := a.approvals.Load(); p != nil {
		return p
	}
	var pol *events.Approvals
	h := a.header()
	pol = h.Approvals
	for _, e := range a.entries() {
		if e.Type == events.EntryApprovalsChange {
			pol = e.Approvals
		}
	}
	if pol == nil && a.o.budget != nil {
		def, err := a.tenantDefault(ctx, budget.TenantOf(h.Tenant))
		if err != nil {
			a.log.Warn("cannot read the tenant's default approval policy before the run ended; the call asks", "err", err)
			return &events.Approvals{Tools: map[string]string{"*": events.PolicyAsk}}
		}
		pol = def
	}
	if pol == nil {
		pol = &events.Approvals{}
	}
	a.approvals.Store(pol)
	return pol
}

// tenantDefault reads the tenant's default policy, again after each
// failure, until it has it or ctx ends.
func (a *actor) tenantDefault(ctx context.Context, tenant string) (*events.Approvals, error) {
	for attempt := 1; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		def, err := a.o.budget.Approvals(rctx, tenant)
		cancel()
		if err == nil {
			if attempt > 1 {
				a.log.Info("read the tenant's default approval policy", "attempts", attempt)
			}
			return def, nil
		}
		if attempt == 1 {
			a.log.Warn("cannot read the tenant's default approval policy; reading it again", "err", err)
		}
		t := time.NewTimer(handoverWait(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (after %d attempts: %v)", ctx.Err(), attempt, err)
		case <-t.C:
		}
	}
}

// approvalFunc is the harness's Approval: a hook's ask or allow decides,
// else the policy.
func (a *actor) approvalFunc() func(context.Context, string, string) bool {
	return func(ctx context.Context, tool, hookApproval string) bool {
		if tool == events.TaskTool {
			return false // a sub-agent's own calls ask (subagents.go)
		}
		switch hookApproval {
		case hook.ApprovalAsk:
			return true
		case hook.ApprovalAllow:
			return false
		}
		return a.policy(ctx).Decide(tool) == events.PolicyAsk
	}
}

func (a *actor) expiresAtFunc() func(context.Context) string {
	return func(ctx context.Context) string { return a.policy(ctx).ExpiresAt(time.Now()) }
}

// wait returns the parked batch the session's active path ends in, or nil.
func (a *actor) wait() *harness.Wait {
	_, path, err := a.st.Path(context.Background())
	if err != nil {
		return nil
	}
	return harness.WaitOf(path)
}

// setApprovals records a new policy; it applies to calls prepared from now.
func (a *actor) setApprovals(ctx context.Context, cmd events.Command) {
	e := events.Entry{Type: events.EntryApprovalsChange, CommandID: cmd.ID, Principal: cmd.Principal, Approvals: cmd.Approvals}
	if _, err := a.st.Append(context.WithoutCancel(ctx), e); err != nil {
		a.log.Warn("cannot record the approval policy", "command", cmd.ID, "err", err)
		return // unfinished: the next owner applies it
	}
	a.approvals.Store(cmd.Approvals)
}

// answer applies approve or deny: refused, with the reason, for a call
// that is not pending in this session (unknown, already answered, of
// another batch), an approval whose arguments do not fit the tool's
// schema, or an answer after the request expired.
func (a *actor) answer(ctx context.Context, cmd events.Command) {
	w := a.wait()
	var req events.Entry
	ok := false
	if w != nil {
		req, ok = w.Request(cmd.ToolCallID)
	}
	if !ok {
		a.reject(ctx, cmd, codeUnknownCall, fmt.Sprintf("toolCallId: no approval is pending for tool call %q in session %s", cmd.ToolCallID, a.sid.ID))
		return
	}
	if prev, done := w.Answers[cmd.ToolCallID]; done {
		who := prev.Principal
		if who == "" {
			who = "an unauthenticated client"
		}
		a.reject(ctx, cmd, codeAnswered, fmt.Sprintf("toolCallId: tool call %q was already answered (%s, by %s)", cmd.ToolCallID, prev.Decision, who))
		return
	}
	if expired(req, time.Now()) {
		a.reject(ctx, cmd, codeExpired, fmt.Sprintf("toolCallId: the approval request of tool call %q expired at %s", cmd.ToolCallID, req.ExpiresAt))
		a.expire(ctx)
		return
	}
	e := events.Entry{Type: events.EntryApprovalAnswered, CommandID: cmd.ID, Principal: cmd.Principal, ToolCallID: cmd.ToolCallID}
	if cmd.Type == events.CmdApprove {
		e.Decision = events.DecisionApprove
		if cmd.Arguments != nil {
			t := a.tools[req.ToolName]
			if t == nil {
				a.reject(ctx, cmd, codeInvalid, fmt.Sprintf("arguments: tool %q is not available to check them against", req.ToolName))
				return
			}
			if err := a.o.validator.Validate(t.Spec(), cmd.Arguments); err != nil {
				a.reject(ctx, cmd, codeInvalid, "arguments: "+err.Error())
				return
			}
			e.Arguments = cmd.Arguments
		}
	} else {
		e.Decision, e.Reason = events.DecisionDeny, cmd.Reason
	}
	if !a.recordAnswer(ctx, e) {
		return
	}
	a.resumeIfAnswered(ctx)
}

// recordAnswer appends an answer and publishes it; false if the append
// failed (the command stays unfinished for the next owner).
func (a *actor) recordAnswer(ctx context.Context, e events.Entry) bool {
	stored, err := a.st.Append(context.WithoutCancel(ctx), e)
	if err != nil {
		a.log.Warn("cannot record an approval answer", "toolCall", e.ToolCallID, "err", err)
		return false
	}
	a.publish(events.Event{Type: events.EvApprovalAnswered, Approval: events.ApprovalOf(&stored)})
	return true
}

func expired(req events.Entry, now time.Time) bool {
	if req.ExpiresAt == "" {
		return false
	}
	t, err := time.Parse(time.RFC3339, req.ExpiresAt)
	return err == nil && !now.Before(t)
}

// expire denies every pending request whose expiry has passed, then
// resumes the run if none is left.
func (a *actor) expire(ctx context.Context) {
	w := a.wait()
	if w == nil {
		return
	}
	now := time.Now()
	for _, r := range w.Pending() {
		if expired(r, now) {
			e := events.Entry{Type: events.EntryApprovalAnswered, ToolCallID: r.ToolCallID, Decision: events.DecisionExpire,
				Reason: "no answer came before " + r.ExpiresAt}
			if !a.recordAnswer(ctx, e) {
				return
			}
		}
	}
	a.resumeIfAnswered(ctx)
}

// nextExpiry returns when the earliest pending request expires; ok is
// false when none does.
func (a *actor) nextExpiry() (time.Time, bool) {
	w := a.wait()
	if w == nil {
		return time.Time{}, false
	}
	var first time.Time
	for _, r := range w.Pending() {
		if r.ExpiresAt == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, r.ExpiresAt)
		if err == nil && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first, !first.IsZero()
}

// resumeIfAnswered starts the run again when the session waits and no
// request is pending.
func (a *actor) resumeIfAnswered(ctx context.Context) {
	if !a.is(lifecycle.Waiting) {
		return // still running: afterRun resumes once the run returns
	}
	if w := a.wait(); w != nil && !w.Answered() {
		return
	}
	a.resume(ctx, false)
}

// resume runs the answered batch on; aborted, the run is cancelled from
// the start, so its results are recorded and it ends aborted.
func (a *actor) resume(ctx context.Context, aborted bool) {
	a.startRun(ctx, func(ctx context.Context) error {
		if aborted {
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
		return a.h.Resume(ctx)
	})
}

// abortWaiting denies every pending call on abort and ends the run.
func (a *actor) abortWaiting(ctx context.Context, cmd events.Command) {
	cleared := a.h.Abort() // queued messages are dropped as on any abort
	for _, m := range append(cleared.Steering, cleared.FollowUp...) {
		if m.CommandID != "" {
			a.reject(ctx, events.Command{ID: m.CommandID}, codeCleared, "the session was aborted before this message was delivered")
		}
	}
	w := a.wait()
	if w == nil {
		return
	}
	for _, r := range w.Pending() {
		e := events.Entry{Type: events.EntryApprovalAnswered, CommandID: cmd.ID, Principal: cmd.Principal, ToolCallID: r.ToolCallID,
			Decision: events.DecisionAbort, Reason: "the run was aborted"}
		if !a.recordAnswer(ctx, e) {
			return
		}
	}
	if !a.abortTasks(ctx, cmd, w) { // subagents.go
		return
	}
	if a.is(lifecycle.Waiting) {
		a.resume(ctx, true)
	}
}

// parked settles a run that returned waiting: waiting, or on at once when
// every call was answered meanwhile (or an abort came while it ran).
func (a *actor) parked(ctx context.Context) {
	a.to(lifecycle.Waiting)
	if c := a.abortCmd; c != nil {
		a.abortCmd = nil
		a.abortWaiting(ctx, *c)
		return
	}
	a.startTasks(ctx, a.wait()) // subagents.go
	a.resumeIfAnswered(ctx)
}

// evictable reports whether the actor may leave memory: idle, or waiting
// with no request that expires (someone must be there when one does).
func (a *actor) evictable() bool {
	if a.recovering > 0 && a.h == nil {
		return false // a turn a failed run left open waits for its recovery (actor.go)
	}
	if a.is(lifecycle.Waiting) || (a.is(lifecycle.Shrunk) && a.shrunkWaiting) {
		_, expires := a.nextExpiry()
		return !expires
	}
	return !a.busy()
}

// armExpiry sets t to fire when the first pending request expires.
func (a *actor) armExpiry(t *time.Timer) {
	if !a.is(lifecycle.Waiting) && !(a.is(lifecycle.Shrunk) && a.shrunkWaiting) {
		return
	}
	at, ok := a.nextExpiry()
	if !ok {
		return
	}
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(max(time.Until(at), 0))
}

// loadWaiting brings back a session whose log ends in a parked batch: a
// call of it with neither a request nor a held result (the process died
// before its result was held) gets its result as recovery finds it, held;
// then the session waits, or goes on if every call is answered.
func (a *actor) loadWaiting(ctx context.Context, w *harness.Wait) error {
	requested := map[string]bool{}
	for _, r := range w.Requests {
		requested[r.ToolCallID] = true
	}
	for _, t := range w.Tasks {
		requested[t.ToolCallID] = true
	}
	for _, c := range w.Message.ToolCalls() {
		if requested[c.ID] {
			continue
		}
		if _, ok := w.Held[c.ID]; ok {
			continue
		}
		r := a.recoverCall(ctx, c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m := r.ResultMessage(time.Now().UnixMilli())
		m.ToolCallID = c.ID
		if _, err := a.st.Append(ctx, events.Entry{Type: events.EntryToolResultHeld, ToolCallID: c.ID, Message: &m}); err != nil {
			return fmt.Errorf("hold recovered result of %s: %w", c.ID, err)
		}
	}
	if err := a.loadTasks(ctx, w); err != nil { // subagents.go
		return err
	}
	if err := a.newHarness(ctx); err != nil {
		return err
	}
	a.setMark() // a session that waits keeps its mark
	a.to(lifecycle.Waiting)
	a.startTasks(ctx, a.wait())
	a.resumeIfAnswered(ctx)
	return nil
}
