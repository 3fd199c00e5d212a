package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/tools"
)

// remoteTools returns the registered tools of names, each run by its pool's
// toolrunners; an unknown or repeated name is an error that says which (pi
// refuses both in a tool set).
func (a *actor) remoteTools(ctx context.Context, names []string) ([]tool.Tool, error) {
	if err := events.UniqueToolNames("tools", names); err != nil {
		return nil, err
	}
	if a.tools == nil {
		a.tools = map[string]*remoteTool{}
	}
	workspace := ""
	if a.st != nil {
		workspace = a.header().Cwd
	}
	out := make([]tool.Tool, 0, len(names))
	for i, n := range names {
		if n == events.TaskTool {
			out = append(out, tools.Task{}) // built in: its calls are parked (subagents.go)
			continue
		}
		t, ok := a.tools[n]
		if !ok {
			reg, err := a.o.bus.Lookup(ctx, n)
			if err != nil {
				return nil, fmt.Errorf("tools[%d]: tool %q is not registered by any toolrunner pool (%v)", i, n, err)
			}
			t = &remoteTool{reg: reg, bus: a.o.bus, waits: a.waits, store: a.st, session: a.sid, workspace: workspace}
			if n == "read" {
				t.skill = a.skillFile
			}
			if a.st != nil {
				a.tools[n] = t // before the session exists, names are only checked
			}
		}
		out = append(out, t)
	}
	return out, nil
}

func (a *actor) header() events.Entry {
	var h events.Entry
	_ = a.st.do(func(s *session.Session) error { h = s.Header(); return nil }) // f returns nil
	return h
}

// newHarness starts the session's harness over its log; the harness reads
// the header with the path, and its context (model, thinking level, system
// prompt, active tools, messages) is what package sessiontree builds from
// them, as `/context` shows it. The tools it may use are those named by the
// header or any tools change in the log; the context's active tools narrow
// them. The header's model, resolved (else the platform's default), is the
// harness's fallback model and sets the compaction reserve.
func (a *actor) newHarness(ctx context.Context) error {
	h := a.header()
	var names []string // each once: a log written before repeats were refused may repeat one
	for _, n := range h.Tools {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, e := range a.entries() {
		if e.Type == events.EntryActiveToolsChange {
			for _, n := range e.ActiveToolNames {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	toolset, err := a.remoteTools(ctx, names)
	if err != nil {
		// A tool no longer registered: go on without it, the model is told
		// "not found" if it calls it.
		a.log.Warn("some tools of the session are not registered", "err", err)
		toolset = toolset[:0]
		for _, n := range names {
			if ts, err := a.remoteTools(ctx, []string{n}); err == nil {
				toolset = append(toolset, ts...)
			}
		}
	}
	_, model, err := a.o.cfg.Models.Resolve(h.Model)
	if err != nil {
		a.log.Warn("the session's model is not available; using the default", "model", h.Model, "err", err)
		_, model, _ = a.o.cfg.Models.Resolve(a.o.cfg.DefaultModel)
	}
	cb, err := a.part.compactbus()
	if err != nil {
		return err
	}
	meter := a.meter(h)    // the tenant's budget on every model call (budget.go)
	a.approvals.Store(nil) // read again, the tenant's default included (approvals.go)
	hs, err := harness.New(ctx, harness.Config{
		SessionID: a.sid.ID, Workspace: h.Cwd, Session: a.st,
		Providers: meter.Providers(a.o.providers), Model: model, Models: a.o.resolveModel, Tools: toolset,
		Sink: meter.Sink(a.publish), Logger: a.log, Validator: &a.o.validator,
		Compactor: a.compactor(cb), Summarizer: a.summarizer(cb), Hooks: a.hooks(),
		ReserveTokens: compaction.SettingsFor(model.ContextWindow).ReserveTokens,
		Approval:      a.approvalFunc(), ApprovalExpiresAt: a.expiresAtFunc(),
		SystemPromptFor: a.systemPromptFor(h), // resources.go
		Deferred:        a.deferredFunc(taskSettings{header: h, tools: names}),
	})
	if err != nil {
		return err
	}
	a.h = hs
	if !a.started {
		a.started = true
		a.notify(events.NoticeSessionStart, nil)
	}
	return nil
}

// summaryTimeout bounds the wait for a compactor's summary.
const summaryTimeout = 10 * time.Minute

// compactor has the compaction workers summarise the session's history
// (pkg/compactbus); the harness appends the entry.
func (a *actor) compactor(cb *compactbus.Client) harness.Compactor {
	return func(ctx context.Context, req harness.CompactRequest) (harness.Compaction, error) {
		ctx, cancel := context.WithTimeout(ctx, summaryTimeout)
		defer cancel()
		s := compaction.SettingsFor(req.Model.ContextWindow)
		r, err := cb.Compact(ctx, a.sid, req.Path, req.Model, s, req.Reason, req.Instructions)
		if err != nil {
			return harness.Compaction{}, err
		}
		return harness.Compaction{Summary: r.Summary, FirstKeptEntryID: r.FirstKeptEntryID, TokensBefore: r.TokensBefore, Details: r.Details}, nil
	}
}

// summarizer has the compaction workers summarise the branch a navigation
// leaves, up to its common ancestor with the target.
func (a *actor) summarizer(cb *compactbus.Client) harness.Summarizer {
	return func(ctx context.Context, req harness.SummaryRequest) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, summaryTimeout)
		defer cancel()
		var target []events.Entry
		if req.TargetID != nil {
			if err := a.st.do(func(s *session.Session) (err error) { target, err = s.Path(*req.TargetID); return err }); err != nil {
				return "", err
			}
		}
		model := a.h.Model()
		s, err := cb.SummarizeBranch(ctx, a.sid, compaction.AbandonedBranch(req.Branch, target), model,
			compaction.SettingsFor(model.ContextWindow), req.Instructions)
		if errors.Is(err, compaction.ErrNothingToCompact) {
			return "", nil // nothing left behind: no summary
		}
		return s, err
	}
}

// Entry implements harness.Session: an entry on any branch.
func (st *store) Entry(_ context.Context, id string) (events.Entry, bool, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	idx, err := st.mu.s.Index()
	if err != nil {
		return events.Entry{}, false, err
	}
	e, ok := idx.Entry(id)
	if !ok {
		return events.Entry{}, false, nil
	}
	return *e, true, nil
}

func (a *actor) entries() []events.Entry {
	var es []events.Entry
	_ = a.st.do(func(s *session.Session) error { es = s.Entries(); return nil }) // f returns nil
	return es
}

// resolver is the provider of every provider name for the harness: it picks
// the real provider for each request's model (OpenAI's two APIs, endpoints,
// the scripted provider), so the registry decides, not a fixed map.
type resolver struct{ models Models }

func (r resolver) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	p, _, err := r.models.Resolve(req.Model.Ref())
	if err != nil {
		msg := events.Message{Role: events.RoleAssistant, Provider: req.Model.Provider, Model: req.Model.ID,
			StopReason: events.StopError, ErrorMessage: err.Error()}
		return msg, &llm.Error{Kind: llm.KindInvalidRequest, Message: err.Error(), Err: err}
	}
	return p.Stream(ctx, req, onDelta)
}

func (o *Orchestrator) resolveModel(ref string) (llm.Model, bool) {
	_, m, err := o.cfg.Models.Resolve(ref)
	return m, err == nil
}
