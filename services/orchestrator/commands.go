package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/workspace"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/intake"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"
	"go.opentelemetry.io/otel/trace"
)

// Rejection codes recorded in command_rejected entries.
const (
	codeBusy        = "busy"
	codeIdle        = "idle"
	codeInvalid     = "invalid"
	codeNoSession   = "no_session"
	codeExists      = "exists"
	codeCleared     = "cleared_by_abort"
	codeUnavailable = "unavailable"
)

// handleCommand applies one command of the session, in order.
func (a *actor) handleCommand(ctx context.Context, c intake.Command) {
	if c.Err != nil {
		a.log.Warn("invalid command in the stream", "seq", c.Seq, "err", c.Err)
		a.reject(ctx, events.Command{ID: fmt.Sprintf("seq-%d", c.Seq)}, codeInvalid, "invalid command: "+c.Err.Error())
		a.part.done(c.Seq)
		return
	}
	cmd := c.Cmd
	if c.Parent.IsValid() { // the run and the entries it causes continue the sender's trace
		ctx = trace.ContextWithRemoteSpanContext(ctx, c.Parent)
	}
	a.o.metrics.commands.WithLabelValues(cmd.Type).Inc()
	if cmd.Type == events.CmdCreate {
		a.create(ctx, c)
		return
	}
	if a.st == nil {
		a.reject(ctx, cmd, codeNoSession, fmt.Sprintf("session %s does not exist; create it first", a.sid.ID))
		return
	}
	a.st.notePrincipal(cmd.ID, cmd.Principal) // the entries naming it name its sender
	if a.h == nil {
		// Recovery is running; the command waits for it.
		a.deferred = append(a.deferred, c)
		return
	}
	switch cmd.Type {
	case events.CmdPrompt:
		a.prompt(ctx, c)
	case events.CmdSkill, events.CmdPromptTemplate:
		a.runResource(ctx, c) // resources.go
	case events.CmdSteer, events.CmdFollowUp:
		msg := userMessage(cmd)
		switch {
		case !a.busy():
			a.startPrompt(ctx, msg)
		case cmd.Type == events.CmdSteer:
			a.h.Steer(msg)
		default:
			a.h.FollowUp(msg)
		}
	case events.CmdApprove, events.CmdDeny:
		a.answer(ctx, cmd)
	case events.CmdSetApprovals:
		a.setApprovals(ctx, cmd)
	case events.CmdTaskResult:
		a.taskResult(ctx, cmd) // subagents.go
	case events.CmdAbort:
		if a.is(lifecycle.Waiting) {
			a.abortWaiting(ctx, cmd)
			return
		}
		if a.is(lifecycle.Running) {
			a.abortCmd = &cmd // denies the calls the run may have parked
		}
		if !a.busy() {
			a.reject(ctx, cmd, codeIdle, "nothing to abort: the session is idle")
			return
		}
		a.st.stamp(stampAbort, cmd.ID)
		a.abort(ctx)
	case events.CmdNavigate:
		a.navigate(ctx, cmd)
	case events.CmdCompact:
		a.compact(ctx, cmd)
	case events.CmdSetModel:
		_, m, err := a.o.cfg.Models.Resolve(cmd.Model)
		if err != nil {
			a.reject(ctx, cmd, codeInvalid, fmt.Sprintf("model: %v", err))
			return
		}
		a.st.stamp(events.EntryModelChange, cmd.ID)
		a.write(ctx, cmd, events.EntryModelChange, a.h.SetModel(ctx, m))
	case events.CmdSetThinkingLevel:
		a.st.stamp(events.EntryThinkingLevelChange, cmd.ID)
		a.write(ctx, cmd, events.EntryThinkingLevelChange, a.h.SetThinkingLevel(ctx, cmd.Level))
	case events.CmdSetTools:
		tools, err := a.remoteTools(ctx, cmd.Tools) // refuses unknown and repeated names
		if err != nil {
			a.reject(ctx, cmd, codeInvalid, err.Error())
			return
		}
		a.st.stamp(events.EntryActiveToolsChange, cmd.ID)
		a.write(ctx, cmd, events.EntryActiveToolsChange, a.h.SetTools(ctx, tools))
	case events.CmdLabel:
		if !a.hasEntry(*cmd.EntryID) {
			a.reject(ctx, cmd, codeInvalid, fmt.Sprintf("entryId: no entry %q in session %s", *cmd.EntryID, a.sid.ID))
			return
		}
		target := *cmd.EntryID
		e := events.Entry{Type: events.EntryLabel, CommandID: cmd.ID, TargetID: &target, Label: cmd.Label}
		a.write(ctx, cmd, "", a.h.Append(ctx, e))
	}
}

// write ends a configuration command whose entry the harness writes now or
// at its next save point.
func (a *actor) write(ctx context.Context, cmd events.Command, stampKind string, err error) {
	if err == nil {
		return
	}
	if stampKind != "" {
		a.st.unstamp(stampKind)
	}
	a.reject(ctx, cmd, codeInvalid, err.Error())
}

func (a *actor) prompt(ctx context.Context, c intake.Command) {
	a.promptMessage(ctx, c, userMessage(c.Cmd))
}

// promptMessage runs msg, the user message of c, by c's busy policy.
func (a *actor) promptMessage(ctx context.Context, c intake.Command, msg events.Message) {
	cmd := c.Cmd
	if !a.busy() {
		a.startPrompt(ctx, msg)
		return
	}
	switch cmd.WhenBusyOrDefault() {
	case events.BusyReject:
		if a.is(lifecycle.Waiting) {
			a.reject(ctx, cmd, codeBusy, "the session is waiting for approvals; answer them, or send it with whenBusy steer, follow_up or interrupt")
			return
		}
		a.reject(ctx, cmd, codeBusy, "the session is running; send it with whenBusy steer, follow_up or interrupt, or wait")
	case events.BusySteer:
		a.h.Steer(msg)
	case events.BusyFollowUp:
		a.h.FollowUp(msg)
	case events.BusyInterrupt:
		if a.is(lifecycle.Waiting) {
			a.deferred = append(a.deferred, c)
			a.abortWaiting(ctx, cmd)
			return
		}
		a.abort(ctx)
		a.deferred = append(a.deferred, c)
	}
}

// abort stops the run and records why each queued message will not be
// delivered, so that a replay after a crash does not bring it back.
func (a *actor) abort(ctx context.Context) {
	cleared := a.h.Abort()
	a.move(lifecycle.Running, lifecycle.Settling)
	for _, m := range append(cleared.Steering, cleared.FollowUp...) {
		if m.CommandID != "" {
			a.reject(ctx, events.Command{ID: m.CommandID}, codeCleared, "the session was aborted before this message was delivered")
		}
	}
}

// navigate moves the leaf as pi does (harness.Navigate); a navigation to
// the active leaf writes nothing and is recorded as applied with no effect
// (outcomes.go).
func (a *actor) navigate(ctx context.Context, cmd events.Command) {
	if a.busy() {
		a.reject(ctx, cmd, codeBusy, "the session is running; navigate needs it idle")
		return
	}
	if cmd.EntryID != nil && !a.hasEntry(*cmd.EntryID) {
		a.reject(ctx, cmd, codeInvalid, fmt.Sprintf("entryId: no entry %q in session %s", *cmd.EntryID, a.sid.ID))
		return
	}
	a.st.stamp(events.EntryLeaf, cmd.ID)
	navigate := func(ctx context.Context) error {
		a.notify(events.NoticeSessionBeforeTree, treeNotice{TargetID: cmd.EntryID, Summarize: cmd.Summarize})
		nav, err := a.h.Navigate(ctx, cmd.EntryID, harness.NavigateOptions{Summarize: cmd.Summarize, Instructions: cmd.Instructions})
		left := a.st.unstamp(events.EntryLeaf)
		if err != nil {
			a.reject(ctx, cmd, codeInvalid, err.Error())
			return err
		}
		if !nav.Unchanged {
			a.notify(events.NoticeSessionTree, treeNotice{TargetID: cmd.EntryID, Summarize: cmd.Summarize})
		}
		if nav.Unchanged && !a.recordNoEffect(cmd) {
			return nil // unfinished: the next owner applies it
		}
		for _, id := range left {
			a.finish(id) // no entry names it: the leaf was there already
		}
		return nil
	}
	if cmd.Summarize {
		// The compactors write the branch summary: run it like a turn, so
		// the mailbox (and an abort) is served meanwhile.
		a.startRun(ctx, navigate)
		return
	}
	_ = navigate(ctx)
}

// compact runs a manual compaction; the compaction entry names the command.
func (a *actor) compact(ctx context.Context, cmd events.Command) {
	if a.busy() {
		a.reject(ctx, cmd, codeBusy, "the session is running; compact needs it idle")
		return
	}
	a.st.stamp(events.EntryCompaction, cmd.ID)
	a.startRun(ctx, func(ctx context.Context) error {
		err := a.h.Compact(ctx, cmd.Instructions)
		if a.st.unstamp(events.EntryCompaction) == nil || err == nil {
			return err
		}
		code := codeUnavailable
		switch {
		case errors.Is(err, harness.ErrBusy):
			code = codeBusy
		case errors.Is(err, compaction.ErrNothingToCompact), errors.Is(err, harness.ErrCancelled):
			code = codeInvalid
		}
		a.reject(ctx, cmd, code, err.Error())
		return err
	})
}

func (a *actor) hasEntry(id string) bool {
	found := false
	_ = a.st.do(func(s *session.Session) error { // f returns nil
		_, err := s.Path(id)
		found = err == nil
		return nil
	})
	return found
}

// reject records that cmd was refused, and why: in the log when the session
// exists, else in the outcomes bucket, and as a live event.
func (a *actor) reject(ctx context.Context, cmd events.Command, code, reason string) {
	a.o.metrics.rejected.WithLabelValues(code).Inc()
	a.publish(events.Event{Type: events.EvCommandRejected, CommandID: cmd.ID, Error: reason})
	if a.st == nil {
		// No log to record it in: the outcomes bucket holds it (outcomes.go).
		if a.recordRefusal(cmd, code, reason) {
			a.finish(cmd.ID)
		}
		return
	}
	// Written at once, even while a turn runs: the entry is not part of the
	// conversation (the reducer skips it), and a client waiting for the
	// command's outcome should not wait for the turn to end.
	e := events.Entry{Type: events.EntryCommandRejected, CommandID: cmd.ID, Principal: cmd.Principal, Reason: reason, Code: code}
	if _, err := a.st.Append(context.WithoutCancel(ctx), e); err != nil {
		a.log.Warn("cannot record a rejected command", "command", cmd.ID, "err", err)
		return
	}
	if cmd.ID == events.TaskCommandID("prompt", a.sid.ID, "") {
		a.reportToParent(ctx) // a sub-agent that refused its task: the parent hears it (subagents.go)
	}
}

// create starts the session's log with its header.
func (a *actor) create(ctx context.Context, c intake.Command) {
	cmd := c.Cmd
	if a.st != nil {
		a.reject(ctx, cmd, codeExists, fmt.Sprintf("session %s already exists", a.sid.ID))
		return
	}
	model := cmd.Model
	if model == "" {
		model = a.o.cfg.DefaultModel
	}
	if _, _, err := a.o.cfg.Models.Resolve(model); err != nil {
		a.reject(ctx, cmd, codeInvalid, fmt.Sprintf("model: %v", err))
		return
	}
	workspace, err := workspace.Rel(a.o.cfg.WorkspaceRoot, a.sid, cmd.Workspace)
	if err != nil {
		a.reject(ctx, cmd, codeInvalid, err.Error())
		return
	}
	names := cmd.Tools
	if names == nil {
		regs, err := a.o.bus.Tools(ctx)
		if err != nil {
			a.reject(ctx, cmd, codeUnavailable, "cannot read the tool registry: "+err.Error())
			return
		}
		names = []string{}
		for _, r := range regs {
			if r.Serves(a.sid.Tenant) { // a pool restricted to other tenants is not this session's
				names = append(names, r.Name)
			}
		}
	} else if _, err := a.remoteTools(ctx, names); err != nil {
		a.reject(ctx, cmd, codeInvalid, err.Error())
		return
	}
	// The header keeps the session's own prompt only: without one, the
	// builder takes the tenant's base, else the orchestrator's default,
	// at each run (resources.go), and the log records what it built.
	systemPrompt := cmd.SystemPrompt
	h := events.Entry{V: events.SchemaVersion, Type: events.EntrySession, ID: a.sid.ID, Tenant: a.sid.Tenant, CommandID: cmd.ID, Principal: cmd.Principal,
		Timestamp: events.FormatTime(time.Now()), Version: events.PiVersion, Cwd: workspace, Model: model,
		SystemPrompt: systemPrompt, Tools: names, Approvals: cmd.Approvals,
		ParentSession: cmd.ParentSession, ParentToolCallID: cmd.ParentToolCallID, TaskDepth: cmd.TaskDepth}
	if err := a.part.awaitWritable(ctx); err != nil {
		a.log.Warn("cannot create the session", "err", err)
		return // given up: the command stays pending; the next owner creates it
	}
	s, err := session.Create(ctx, a.o.cfg.Log, h)
	if err != nil {
		if errors.Is(err, session.ErrConflict) {
			// Created meanwhile by someone else: load what is there.
			if lerr := a.load(ctx); lerr == nil {
				a.handle(ctx, item{cmd: &c})
				return
			}
		}
		a.log.Error("cannot create the session", "err", err)
		return // the command stays pending; the next owner tries again
	}
	a.attach(s)
	a.onApplied(cmd.ID)
	if err := a.newHarness(ctx); err != nil {
		a.log.Error("cannot start the session's harness", "err", err)
	}
}

func userMessage(cmd events.Command) events.Message {
	content := events.Content{}
	if cmd.Text != "" {
		content.Blocks = append(content.Blocks, events.TextBlock(cmd.Text))
	}
	for _, img := range cmd.Images {
		content.Blocks = append(content.Blocks, events.Block{Type: events.BlockImage, Data: img.Data, MimeType: img.MimeType})
	}
	return events.Message{Role: events.RoleUser, Content: content, CommandID: cmd.ID, Timestamp: time.Now().UnixMilli()}
}
