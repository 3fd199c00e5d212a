package agent

import (
	"context"
	"errors"
	"sync"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// ErrNothingToContinue is returned by Continue when the context does not end
// in a message a model can answer (a user message or a tool result).
var ErrNothingToContinue = errors.New("nothing to continue: the context must end with a user message or a tool result")

// ErrNoProvider is returned when a Config lacks its Provider.
var ErrNoProvider = errors.New("agent: config has no provider")

// Run adds prompts to c and runs the loop until the agent settles. It
// returns the messages the run added (prompts included) and, when the run
// ended with an assistant message in error or aborted, the error that ended
// it (llm.KindOf tells which; aborted runs give a KindAborted error).
func Run(ctx context.Context, cfg *Config, c *Context, prompts []events.Message) ([]events.Message, error) {
	if cfg.Provider == nil {
		return nil, ErrNoProvider
	}
	r := newRun(cfg, c)
	r.emit(events.Event{Type: events.EvAgentStart})
	r.emit(events.Event{Type: events.EvTurnStart})
	prompts = append([]events.Message(nil), prompts...)
	for i := range prompts {
		prompts[i] = stamp(prompts[i])
		r.add(&prompts[i])
	}
	err := r.loop(ctx)
	return r.added, err
}

// Continue runs the loop from c as it is, without a new message: after a
// retry, a recovery or a compaction. The context must end, once converted
// for the provider, with a user message or a tool result.
func Continue(ctx context.Context, cfg *Config, c *Context) ([]events.Message, error) {
	if cfg.Provider == nil {
		return nil, ErrNoProvider
	}
	conv := convert(cfg)(c.Messages)
	if len(conv) == 0 || conv[len(conv)-1].Role == events.RoleAssistant {
		return nil, ErrNothingToContinue
	}
	r := newRun(cfg, c)
	r.emit(events.Event{Type: events.EvAgentStart})
	r.emit(events.Event{Type: events.EvTurnStart})
	err := r.loop(ctx)
	return r.added, err
}

// run is the state of one run.
type run struct {
	cfg       Config // a copy: SavePoint changes apply to it
	c         *Context
	validator *tool.Validator
	specs     []events.ToolSpec
	added     []events.Message
	failures  int
	turns     int    // turns started, for the turn spans
	resume    *Batch // a parked batch the first turn finishes (Resume)
	deferredN int    // calls of the batch being prepared that Deferred parked
	sinkMu    sync.Mutex

	// one model call at a time: reused from call to call
	req     llm.Request
	onDelta func(events.Delta) // r.delta, bound once
	started bool
	base    events.Message
}

func newRun(cfg *Config, c *Context) *run {
	r := &run{cfg: *cfg, c: c, validator: cfg.Validator}
	if r.validator == nil {
		r.validator = new(tool.Validator)
	}
	r.setTools(c.Tools)
	r.onDelta = r.delta
	return r
}

func (r *run) setTools(ts []tool.Tool) {
	r.c.Tools = ts
	r.specs = make([]events.ToolSpec, len(ts))
	for i, t := range ts {
		r.specs[i] = t.Spec()
	}
}

func (r *run) emit(ev events.Event) {
	if r.cfg.Sink == nil {
		return
	}
	r.sinkMu.Lock()
	defer r.sinkMu.Unlock()
	r.cfg.Sink(ev)
}

// add records a finished non-assistant message: its events, the context,
// the run's list. m must not change afterwards: the sink may keep it.
func (r *run) add(m *events.Message) {
	r.emit(events.Event{Type: events.EvMessageStart, Message: m})
	r.emit(events.Event{Type: events.EvMessageEnd, Message: m})
	r.c.Messages = append(r.c.Messages, *m)
	r.added = append(r.added, *m)
}

func (r *run) loop(ctx context.Context) error {
	var pending []events.Message
	if r.resume == nil { // a resumed batch's results come first
		pending = pull(r.cfg.Steering)
	}
	first := true
	for {
		more := true
		for more || len(pending) > 0 {
			if !first {
				r.emit(events.Event{Type: events.EvTurnStart})
			}
			first = false
			for i := range pending {
				pending[i] = stamp(pending[i])
				r.add(&pending[i])
			}
			pending = nil

			tctx, tspan := r.startTurn(ctx)
			if b := r.resume; b != nil {
				// The parked batch's turn goes on: its calls are
				// answered, no model call is owed.
				r.resume = nil
				msg := b.Message
				results, terminate := r.resumeTools(tctx, b)
				more = len(results) > 0 && !terminate
				r.endTurn(tspan, &msg, results)
				if r.savePoint(ctx, msg, results) {
					r.emit(events.Event{Type: events.EvAgentEnd, Messages: r.added})
					return nil
				}
				pending = pull(r.cfg.Steering)
				continue
			}
			msg, err := r.callModel(tctx)
			if msg.StopReason == events.StopError || msg.StopReason == events.StopAborted {
				if rec, ok := r.recover(ctx, msg, err); ok {
					r.endTurn(tspan, &msg, nil)
					if rec.Messages != nil {
						r.c.Messages = rec.Messages
					}
					more = true
					continue
				} else if rec.Err != nil {
					err = rec.Err
					if rec.Record {
						msg = r.recordFailure(err)
					}
				}
				r.endTurn(tspan, &msg, nil)
				r.emit(events.Event{Type: events.EvAgentEnd, Messages: r.added})
				return err
			}
			r.failures = 0

			results, terminate, parked := r.runTools(tctx, &msg)
			if parked != nil {
				// The turn goes on when the last answer comes (Resume);
				// no turn_end, no agent_end: the run is not over.
				tspan.End()
				return parked
			}
			more = len(results) > 0 && !terminate
			r.endTurn(tspan, &msg, results)
			if r.savePoint(ctx, msg, results) {
				r.emit(events.Event{Type: events.EvAgentEnd, Messages: r.added})
				return nil
			}
			pending = pull(r.cfg.Steering)
		}
		if pending = pull(r.cfg.FollowUp); len(pending) > 0 {
			continue
		}
		break
	}
	r.emit(events.Event{Type: events.EvAgentEnd, Messages: r.added})
	return nil
}

func (r *run) recover(ctx context.Context, msg events.Message, err error) (Recovery, bool) {
	if msg.StopReason != events.StopError || r.cfg.Recover == nil || err == nil {
		return Recovery{}, false
	}
	r.failures++
	rec := r.cfg.Recover(ctx, Failure{Err: err, Attempt: r.failures, Message: msg})
	return rec, rec.Retry
}

// recordFailure records the assistant message that ends a run whose
// recovery failed: no model call, only the reason.
func (r *run) recordFailure(err error) events.Message {
	m := &r.cfg.Model
	msg := stamp(events.Message{Role: events.RoleAssistant, API: m.API, Provider: m.Provider, Model: m.ID,
		StopReason: events.StopError, ErrorMessage: err.Error()})
	r.emit(events.Event{Type: events.EvMessageStart, Message: &msg})
	r.emit(events.Event{Type: events.EvMessageEnd, Message: &msg})
	r.c.Messages = append(r.c.Messages, msg)
	r.added = append(r.added, msg)
	return msg
}

// savePoint applies what the harness and the next_turn hooks decide for
// the next call and reports whether the run must stop.
func (r *run) savePoint(ctx context.Context, msg events.Message, results []events.Message) bool {
	var next NextTurn
	if r.cfg.SavePoint != nil {
		next = r.cfg.SavePoint(ctx, Turn{Message: msg, ToolResults: results, Context: r.c})
	}
	if next.Messages != nil {
		r.c.Messages = next.Messages
	}
	if next.Provider != nil {
		r.cfg.Provider = next.Provider
	}
	if next.Model != nil {
		r.cfg.Model = *next.Model
	}
	if next.ThinkingLevel != nil {
		r.cfg.ThinkingLevel = *next.ThinkingLevel
	}
	if next.SystemPrompt != nil {
		r.c.SystemPrompt = *next.SystemPrompt
	}
	if next.Tools != nil || next.SetTools {
		r.setTools(next.Tools)
	}
	if next.Stream != nil {
		r.cfg.Stream = *next.Stream
	}
	res := hook.NextTurn(ctx, r.cfg.Hooks, hook.NextTurnEvent{Messages: r.c.Messages, Model: r.cfg.Model})
	if res.Messages != nil {
		r.c.Messages = res.Messages
	}
	if res.Model != nil {
		r.cfg.Model = *res.Model
	}
	return next.Stop || res.Stop
}

func pull(f func() []events.Message) []events.Message {
	if f == nil {
		return nil
	}
	return f()
}

func convert(cfg *Config) func([]events.Message) []events.Message {
	if cfg.Convert != nil {
		return cfg.Convert
	}
	return ToLLM
}

// abortedError is the error of a run ended by cancellation.
func abortedError(ctx context.Context) error {
	return &llm.Error{Kind: llm.KindAborted, Message: "the run was aborted", Err: context.Cause(ctx)}
}
