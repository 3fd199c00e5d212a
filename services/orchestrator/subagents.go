package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/resources"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/tools"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"
	"github.com/nats-io/nats.go"
)

// Sub-agents (DESIGN §13, docs/subagents.md). A call of the built-in task
// tool is checked as it is prepared (deferredFunc: its arguments, the
// tenant's depth and fan-out limits, the model, the tools) and, if it
// passes, parked like an approval-pending call: the harness appends a
// task_started entry naming the child (events.ChildSessionID), the run
// returns waiting, and the actor is waiting — no goroutine held, evictable.
//
// Then the actor sends the child its create and its first command (a
// prompt, or the skill the call names), with ids derived from the child's
// id, so that sending them again after a crash is a no-op (JetStream's
// dedup window, then the child's log, which names every command it
// applied). When the child's run settles, the orchestrator that owns it
// sends the parent a task_result command; the parent reads the answer
// from the child's log, not from the command, holds it as the call's
// result (tool_result_held, naming the command) and, once nothing of the
// batch waits, resumes as after approvals. A parent that is loaded while
// it waits reads its children's logs too, so a report lost in a crash
// does not leave it waiting.
//
// An abort of the parent sends each running child an abort and holds an
// error result for its call at once; the child's later report finds the
// call answered and changes nothing.

// Rejection code of a task_result for a call that is not a pending task.
const codeUnknownTask = "unknown_task"

// taskSettings is what the task check needs of the session, captured when
// its harness starts: its header and the names of its tools.
type taskSettings struct {
	header events.Entry
	tools  []string
}

// deferredFunc is the harness's Deferred: task calls are parked, or
// refused with a reason the model reads.
func (a *actor) deferredFunc(ts taskSettings) func(context.Context, agent.ParkedCall, int) (bool, string) {
	return func(ctx context.Context, c agent.ParkedCall, n int) (bool, string) {
		if c.ToolName != events.TaskTool {
			return false, ""
		}
		if refusal := a.checkTask(ctx, ts, c.Arguments, n); refusal != "" {
			return false, "Tool call task was refused: " + refusal
		}
		return true, ""
	}
}

// checkTask returns why a task call may not start its child, or "".
func (a *actor) checkTask(ctx context.Context, ts taskSettings, raw json.RawMessage, n int) string {
	args, err := tools.ParseTaskArgs(raw)
	if err != nil {
		return err.Error()
	}
	lim := budget.DefaultSubagents
	if a.o.budget != nil {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		lim, err = a.o.budget.Subagents(rctx, budget.TenantOf(a.sid.Tenant))
		cancel()
		if err != nil {
			return "the tenant's sub-agent limits cannot be read: " + err.Error()
		}
	}
	depth := ts.header.TaskDepth + 1
	if depth > lim.MaxDepth {
		return fmt.Sprintf("a sub-agent started here would be at depth %d, and tenant %s allows sub-agents %d deep. Do the task yourself.",
			depth, budget.TenantOf(a.sid.Tenant), lim.MaxDepth)
	}
	if n >= lim.MaxFanOut {
		return fmt.Sprintf("this reply already starts %d sub-agents, the most tenant %s allows in one batch. Call task again once they have answered.",
			n, budget.TenantOf(a.sid.Tenant))
	}
	if args.Model != "" {
		if _, _, err := a.o.cfg.Models.Resolve(args.Model); err != nil {
			return fmt.Sprintf("model %q is not available: %v", args.Model, err)
		}
	}
	for i, t := range args.Tools {
		if !slices.Contains(ts.tools, t) {
			return fmt.Sprintf("tools[%d]: %q is not one of this session's tools (%s); a sub-agent gets a subset of them", i, t, strings.Join(ts.tools, ", "))
		}
	}
	if args.Skill != "" && a.o.resStore != nil {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := a.o.resStore.Get(rctx, a.sid.Tenant, resources.KindSkill, args.Skill)
		cancel()
		if err != nil {
			return fmt.Sprintf("skill %q: %v", args.Skill, err)
		}
	}
	return ""
}

// startTasks sends each child of w whose result is not held its create
// and first command. Sending again what was sent is a no-op.
func (a *actor) startTasks(ctx context.Context, w *harness.Wait) {
	if w == nil {
		return
	}
	for _, t := range w.PendingTasks() {
		if err := a.startTask(ctx, t); err != nil {
			// The command stays unsent; the next load of the session (a
			// restart, a failover, an eviction) sends it again.
			a.log.Warn("cannot start a sub-agent", "toolCall", t.ToolCallID, "child", t.ChildSessionID, "err", err)
		}
	}
}

func (a *actor) startTask(ctx context.Context, t events.Entry) error {
	args, err := tools.ParseTaskArgs(t.Arguments)
	if err != nil {
		return err // checked before it parked: a log written by another build
	}
	h := a.header()
	model := args.Model
	if model == "" && a.h != nil {
		model = a.h.Model().Ref()
	}
	names := args.Tools
	if names == nil {
		names = a.toolNames()
	}
	child := t.ChildSessionID
	create := events.Command{V: events.SchemaVersion, ID: events.TaskCommandID("create", child, ""), Type: events.CmdCreate, SessionID: child,
		Model: model, Tools: names, Workspace: h.Cwd, Approvals: a.ownPolicy(),
		ParentSession: a.sid.ID, ParentToolCallID: t.ToolCallID, TaskDepth: h.TaskDepth + 1}
	if create.Tools == nil {
		create.Tools = []string{}
	}
	first := events.Command{V: events.SchemaVersion, ID: events.TaskCommandID("prompt", child, ""), Type: events.CmdPrompt, SessionID: child, Text: args.Prompt}
	if args.Skill != "" {
		first.Type, first.Name = events.CmdSkill, args.Skill
	}
	for _, c := range []events.Command{create, first} {
		if err := a.sendCommand(ctx, child, c); err != nil {
			return err
		}
	}
	return nil
}

// ownPolicy returns the session's own approval policy (its log's, else
// its header's), nil when it follows its tenant's default: a child asks
// where its parent would.
func (a *actor) ownPolicy() *events.Approvals {
	pol := a.header().Approvals
	for _, e := range a.entries() {
		if e.Type == events.EntryApprovalsChange {
			pol = e.Approvals
		}
	}
	return pol
}

// toolNames returns the names of the session's tools: the header's and
// every tools change's.
func (a *actor) toolNames() []string {
	var names []string
	add := func(ns []string) {
		for _, n := range ns {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	add(a.header().Tools)
	for _, e := range a.entries() {
		if e.Type == events.EntryActiveToolsChange {
			add(e.ActiveToolNames)
		}
	}
	return names
}

// sendCommand stores cmd for session sid of the actor's tenant.
func (a *actor) sendCommand(ctx context.Context, sid string, cmd events.Command) error {
	data, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	ref := events.SessionRef{Tenant: a.sid.Tenant, ID: sid}
	msg := &nats.Msg{Subject: a.o.cfg.Names.CommandSubject(ref), Data: data, Header: nats.Header{}}
	msg.Header.Set(events.HeaderMsgID, events.CommandMsgID(ref.Tenant, cmd.ID))
	msg.Header.Set(events.HeaderSchema, fmt.Sprint(events.SchemaVersion))
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err = a.o.js.PublishMsg(pctx, msg)
	return err
}

// taskResult applies a task_result: the call's result is read from the
// child's log and held. A report for a call already answered changes
// nothing; one for a call that never started this child is refused.
func (a *actor) taskResult(ctx context.Context, cmd events.Command) {
	started := false
	for _, e := range a.entries() {
		if e.Type == events.EntryTaskStarted && e.ToolCallID == cmd.ToolCallID && e.ChildSessionID == cmd.ChildSessionID {
			started = true
			break
		}
	}
	if !started {
		a.reject(ctx, cmd, codeUnknownTask, fmt.Sprintf("toolCallId: no task call %q of session %s started sub-agent %s", cmd.ToolCallID, a.sid.ID, cmd.ChildSessionID))
		return
	}
	w := a.wait()
	pending := false
	var t events.Entry
	if w != nil {
		for _, p := range w.PendingTasks() {
			if p.ToolCallID == cmd.ToolCallID {
				pending, t = true, p
			}
		}
	}
	if !pending {
		a.noEffect(cmd) // answered already: an abort, or an earlier report
		return
	}
	m, settled, err := a.readChild(ctx, t)
	if err != nil || !settled {
		a.log.Warn("a sub-agent's report came before its log showed it settled", "child", t.ChildSessionID, "err", err)
		a.noEffect(cmd) // its next settle reports again, with another id
		return
	}
	if !a.holdTaskResult(ctx, cmd.ID, "", t, m) {
		return
	}
	a.resumeIfAnswered(ctx)
}

func (a *actor) noEffect(cmd events.Command) {
	if a.recordNoEffect(cmd) {
		a.finish(cmd.ID)
	}
}

// holdTaskResult appends m as the held result of task call t; false if
// the append failed (the command stays unfinished for the next owner).
func (a *actor) holdTaskResult(ctx context.Context, commandID, principal string, t events.Entry, m events.Message) bool {
	m.ToolCallID, m.ToolName = t.ToolCallID, t.ToolName
	if m.Timestamp == 0 {
		m.Timestamp = time.Now().UnixMilli()
	}
	e := events.Entry{Type: events.EntryToolResultHeld, CommandID: commandID, Principal: principal, ToolCallID: t.ToolCallID, Message: &m}
	if _, err := a.st.Append(context.WithoutCancel(ctx), e); err != nil {
		a.log.Warn("cannot hold a sub-agent's result", "toolCall", t.ToolCallID, "err", err)
		return false
	}
	return true
}

// readChild reads the child of task t from the log and returns the call's
// result, once the child settled.
func (a *actor) readChild(ctx context.Context, t events.Entry) (events.Message, bool, error) {
	s, err := session.Load(ctx, a.o.cfg.Log, events.SessionRef{Tenant: a.sid.Tenant, ID: t.ChildSessionID})
	if errors.Is(err, session.ErrNotFound) {
		return events.Message{}, false, nil
	}
	if err != nil {
		return events.Message{}, false, err
	}
	h := s.Header()
	if h.ParentSession != a.sid.ID || h.ParentToolCallID != t.ToolCallID {
		return taskError(fmt.Sprintf("Tool call task failed: session %s, where its sub-agent should run, was not created by this task call.", t.ChildSessionID), t.ChildSessionID), true, nil
	}
	var path []events.Entry
	if leaf := s.Leaf(); leaf != nil {
		if path, err = s.Path(*leaf); err != nil {
			return events.Message{}, false, err
		}
	}
	m, settled := childOutcome(s.Entries(), path, t.ChildSessionID)
	return m, settled, nil
}

// childOutcome returns the result a task call gets from its child's log:
// settled once the child's first command was applied and its run is over
// (nothing to recover, nothing parked). The answer is the text of its last
// assistant message; a run that failed, was aborted or was cut short by a
// crash gives an error result.
func childOutcome(entries, path []events.Entry, child string) (events.Message, bool) {
	first := events.TaskCommandID("prompt", child, "")
	for _, e := range entries {
		if e.Type == events.EntryCommandRejected && e.CommandID == first {
			return taskError(fmt.Sprintf("Tool call task failed: its sub-agent (session %s) refused the task: %s", child, e.Reason), child), true
		}
	}
	prompted := false
	for _, e := range path {
		if e.CommandID == first {
			prompted = true
			break
		}
	}
	if !prompted || needsRecoveryPath(path) || harness.WaitOf(path) != nil {
		return events.Message{}, false
	}
	for i := len(path) - 1; i >= 0; i-- {
		e := &path[i]
		if e.Type == events.EntryTurnInterrupted {
			return taskError(fmt.Sprintf("Tool call task failed: its sub-agent (session %s) was interrupted when the orchestrator running it stopped.", child), child), true
		}
		if e.Type != events.EntryMessage || e.Message == nil || e.Message.Role != events.RoleAssistant {
			continue
		}
		m := e.Message
		switch m.StopReason {
		case events.StopAborted:
			return taskError(fmt.Sprintf("Tool call task failed: its sub-agent (session %s) was aborted.", child), child), true
		case events.StopError:
			return taskError(fmt.Sprintf("Tool call task failed: its sub-agent (session %s) stopped with an error: %s", child, m.ErrorMessage), child), true
		}
		text := strings.TrimSpace(m.Content.Text())
		if text == "" {
			text = "(The sub-agent finished without a text answer.)"
		}
		return events.Message{Role: events.RoleToolResult, Content: events.Content{Blocks: []events.Block{events.TextBlock(text)}},
			Details: taskDetails(child)}, true
	}
	return events.Message{}, false
}

func taskError(text, child string) events.Message {
	return events.Message{Role: events.RoleToolResult, IsError: true, Content: events.Content{Blocks: []events.Block{events.TextBlock(text)}},
		Details: taskDetails(child)}
}

// taskDetails is a task result's details: the child session, for clients.
func taskDetails(child string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"sessionId": child}) // a map of strings always encodes
	return b
}

// loadTasks, for a session loaded while it waits, holds the result of
// every child that settled meanwhile (its report may have been lost with
// the process) and sends the others their commands again.
func (a *actor) loadTasks(ctx context.Context, w *harness.Wait) error {
	for _, t := range w.PendingTasks() {
		m, settled, err := a.readChild(ctx, t)
		if err != nil {
			return fmt.Errorf("read sub-agent %s: %w", t.ChildSessionID, err)
		}
		if settled && !a.holdTaskResult(ctx, "", "", t, m) {
			return fmt.Errorf("hold the result of sub-agent %s", t.ChildSessionID)
		}
	}
	return nil
}

// abortTasks, on an abort of the parent, aborts every child whose result
// is not held and holds an error result for its call.
func (a *actor) abortTasks(ctx context.Context, cmd events.Command, w *harness.Wait) bool {
	for _, t := range w.PendingTasks() {
		abort := events.Command{V: events.SchemaVersion, ID: events.TaskCommandID("abort", t.ChildSessionID, cmd.ID), Type: events.CmdAbort, SessionID: t.ChildSessionID}
		if err := a.sendCommand(ctx, t.ChildSessionID, abort); err != nil {
			a.log.Warn("cannot abort a sub-agent", "child", t.ChildSessionID, "err", err)
		}
		m := taskError(fmt.Sprintf("Tool call task was aborted: the run was aborted while its sub-agent (session %s) worked.", t.ChildSessionID), t.ChildSessionID)
		if !a.holdTaskResult(ctx, cmd.ID, cmd.Principal, t, m) {
			return false
		}
	}
	return true
}

// reportToParent, in a sub-agent whose run settled, tells its parent. The
// command's id names the entry the child settled on, so a report sent
// again for the same state is deduplicated, and one for a later state is
// not.
func (a *actor) reportToParent(ctx context.Context) {
	if a.st == nil {
		return
	}
	h := a.header()
	if h.ParentToolCallID == "" || a.is(lifecycle.Waiting) {
		return
	}
	_, path, err := a.st.Path(ctx)
	if err != nil || len(path) == 0 {
		return
	}
	if _, settled := childOutcome(a.entries(), path, a.sid.ID); !settled {
		return
	}
	cmd := events.Command{V: events.SchemaVersion, ID: events.TaskCommandID("result", a.sid.ID, path[len(path)-1].ID), Type: events.CmdTaskResult,
		SessionID: h.ParentSession, ToolCallID: h.ParentToolCallID, ChildSessionID: a.sid.ID}
	if err := a.sendCommand(ctx, h.ParentSession, cmd); err != nil {
		// The parent reads this log when it is next loaded.
		a.log.Warn("cannot report to the parent session", "parent", h.ParentSession, "err", err)
	}
}
