package budget

import (
	"context"
	"errors"
	"sync"

	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// Meter applies a tenant's budget to one session's model calls: it holds a
// run slot from the first call of a run to the run's agent_end, and
// reserves and settles every call. A session's harness uses the providers
// of [Meter.Providers] and passes its events through [Meter.Sink].
type Meter struct {
	l           *Ledger
	tenant, sid string
	mu          struct {
		sync.Mutex
		inRun bool // a run slot is held
	}
}

// Meter returns the meter of session sid of tenant ("" is DefaultTenant).
func (l *Ledger) Meter(tenant, sid string) *Meter {
	return &Meter{l: l, tenant: TenantOf(tenant), sid: sid}
}

// Providers returns ps with every provider metered.
func (m *Meter) Providers(ps map[string]llm.Provider) map[string]llm.Provider {
	out := make(map[string]llm.Provider, len(ps))
	for name, p := range ps {
		out[name] = metered{m: m, next: p}
	}
	return out
}

// Sink returns next preceded by the meter: at a run's agent_end the run
// slot is given back before the event goes on, so a client that prompts
// again upon it finds the slot free.
func (m *Meter) Sink(next func(events.Event)) func(events.Event) {
	return func(ev events.Event) {
		if ev.Type == events.EvAgentEnd {
			m.endRun()
		}
		next(ev)
	}
}

func (m *Meter) endRun() {
	m.mu.Lock()
	held := m.mu.inRun
	m.mu.inRun = false
	m.mu.Unlock()
	if held {
		if err := m.l.Release(context.Background(), m.tenant, m.sid); err != nil {
			m.l.opts.Logger.Warn("budget: cannot release a run slot; it lapses after the hold TTL", "session", m.sid, "err", err)
		}
	}
}

// beginCall reads the limits and, at a run's first call, takes its slot.
func (m *Meter) beginCall(ctx context.Context) (Limits, error) {
	lim, err := m.l.Limits(ctx, m.tenant)
	if err != nil {
		return lim, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.inRun && lim != (Limits{}) {
		err := m.l.Acquire(ctx, m.tenant, m.sid, lim)
		if fresh, ok := m.l.staleRefusal(ctx, m.tenant, lim, err); ok {
			lim, err = fresh, m.l.Acquire(ctx, m.tenant, m.sid, fresh)
		}
		if err != nil {
			return lim, err
		}
		m.mu.inRun = true
	}
	return lim, nil
}

type metered struct {
	m    *Meter
	next llm.Provider
}

func (p metered) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	m := p.m
	lim, err := m.beginCall(ctx)
	if err != nil {
		return refusal(ctx, req, err)
	}
	if lim == (Limits{}) {
		// A tenant without limits is not metered: nothing to reserve, and
		// no write to the tenant's shared keys on every call (its use is
		// in the projector's usage read model).
		return p.next.Stream(ctx, req, onDelta)
	}
	r, err := m.l.Reserve(ctx, m.tenant, m.sid, lim, Estimate(req))
	if fresh, ok := m.l.staleRefusal(ctx, m.tenant, lim, err); ok {
		r, err = m.l.Reserve(ctx, m.tenant, m.sid, fresh, Estimate(req))
	}
	if err != nil {
		return refusal(ctx, req, err)
	}
	msg, err := p.next.Stream(ctx, req, onDelta)
	if serr := m.l.Settle(ctx, r, Used(req.Model, msg.Usage)); serr != nil {
		m.l.opts.Logger.Warn("budget: cannot settle a model call; its reservation lapses and its use is not counted", "session", m.sid, "err", serr)
	}
	return msg, err
}

// refusal is the reply of a call the budget does not admit.
func refusal(ctx context.Context, req *llm.Request, err error) (events.Message, error) {
	msg := events.Message{Role: events.RoleAssistant, API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID,
		StopReason: events.StopError, ErrorMessage: err.Error()}
	var ex *Exceeded
	switch {
	case errors.As(err, &ex):
		return msg, &llm.Error{Kind: llm.KindQuota, Message: err.Error(), Err: err}
	case ctx.Err() != nil:
		msg.StopReason = events.StopAborted
		return msg, &llm.Error{Kind: llm.KindAborted, Message: "the run was aborted", Err: err}
	}
	msg.ErrorMessage = "budget ledger unavailable: " + err.Error()
	return msg, &llm.Error{Kind: llm.KindRetryable, Message: msg.ErrorMessage, Err: err}
}

// Estimate is what a request may use at most, as far as can be told
// before the call: the context's token estimate (pkg/compaction: the last
// reply's usage plus the messages after it, the system prompt and tool
// definitions at 4 characters a token) plus the max output tokens (the
// request's, else the model's), priced at the model's input and output
// prices.
func Estimate(req *llm.Request) Amount {
	in := compaction.EstimateContext(req.Messages).Tokens
	chars := len(req.SystemPrompt)
	for _, t := range req.Tools {
		chars += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	in += int64((chars + 3) / 4)
	out := req.MaxTokens
	if out <= 0 {
		out = req.Model.MaxOutput
	}
	p := req.Model.Price
	return Amount{Tokens: in + out, Cost: (float64(in)*p.Input + float64(out)*p.Output) / 1e6}
}

// Used is the use a reply's usage reports: its total tokens, and its cost
// (priced from the model when the provider left it out). Nil: nothing.
func Used(model llm.Model, u *events.Usage) Amount {
	if u == nil {
		return Amount{}
	}
	c := *u
	if c.Cost.Total == 0 {
		model.Cost(&c)
	}
	return Amount{Tokens: compaction.ContextTokens(&c), Cost: c.Cost.Total}
}
