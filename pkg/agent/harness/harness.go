package harness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// Phase is what a harness is doing.
type Phase string

const (
	PhaseIdle          Phase = "idle"
	PhaseTurn          Phase = "turn"
	PhaseCompaction    Phase = "compaction"
	PhaseBranchSummary Phase = "branch_summary"
	PhaseRetry         Phase = "retry"
)

// settings is the configuration a model call uses.
type settings struct {
	model    llm.Model
	provider llm.Provider
	thinking string
	system   string
	tools    []tool.Tool
	stream   agent.StreamOptions
}

// Harness runs the agent of one session.
type Harness struct {
	cfg       Config
	hooks     *hook.Registry
	validator *tool.Validator
	log       *slog.Logger
	seq       atomic.Uint64

	out struct { // events on their way to the sink
		sync.Mutex
		queue    []events.Event
		spare    []events.Event // the other buffer, reused
		draining bool
	}
	wmu sync.Mutex // one session write at a time

	mu struct {
		sync.Mutex
		phase    Phase
		settings settings
		version  int // bumped by every configuration change
		steer    []events.Message
		follow   []events.Message
		next     []events.Message
		held     []events.Entry
		messages []events.Message // the context of the active leaf
		stale    bool             // messages must be read again from the session
		// recorded is the last system prompt recorded on the active
		// branch (ok false for none; record.go).
		recorded struct {
			text string
			ok   bool
		}
		cancel context.CancelCauseFunc
		idle   chan struct{} // closed when the phase returns to idle
	}

	// run is the state of the current run; only the running goroutine
	// (and the loop's callbacks it runs) touch it.
	run struct {
		version    int
		retrying   int // attempt of the retry in progress, 0 = none
		compacted  bool
		writeErr   error
		cancel     context.CancelCauseFunc
		writeCtx   context.Context
		lastLeafID string
		// agentEnd is the run's agent_end, held until the harness is idle.
		agentEnd *events.Event
		// heldError is an error message's message_end not yet recorded;
		// retryOpen: a retried error message no message followed yet
		// (retrymark.go).
		heldError *events.Event
		retryOpen bool
		// marked is the reason of the save point compaction a reply's
		// compaction mark promised ("" for none); compactionOpen: that
		// compaction is not recorded yet.
		marked         string
		compactionOpen bool
		// hookPrompt is the system prompt a before_agent_start hook gave
		// the run, nil for none: it holds for the whole run, over what
		// the save points build (record.go).
		hookPrompt *SystemPrompt
		// built is what SystemPromptFor last gave the run (record.go).
		built SystemPrompt
	}
}

// New returns a harness for cfg, its state read from the session: the
// context of the active leaf as package sessiontree builds it from the
// header and the path, with its model, thinking level and active tools.
func New(ctx context.Context, cfg Config) (*Harness, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	h := &Harness{cfg: cfg, hooks: cfg.Hooks, log: cfg.Logger, validator: cfg.Validator}
	if h.validator == nil {
		h.validator = new(tool.Validator)
	}
	if h.hooks == nil {
		h.hooks = hook.New(nil)
	}
	h.hooks.SetReporter(h.publish)
	if h.log == nil {
		h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	header, path, err := cfg.Session.Path(ctx)
	if err != nil {
		return nil, fmt.Errorf("harness: read session: %w", err)
	}
	c, err := sessiontree.BuildContext(header, path)
	if err != nil {
		return nil, fmt.Errorf("harness: the session's context: %w", err)
	}
	s := settings{model: cfg.Model, thinking: c.ThinkingLevel, system: cfg.SystemPrompt, tools: cfg.Tools, stream: cfg.Stream}
	if c.Model != "" && c.Model != s.model.Ref() {
		if m, ok := h.resolve(c.Model); ok {
			s.model = m
		} else {
			h.log.Warn("model recorded in the session is not available; keeping the default", "model", c.Model, "default", s.model.Ref())
		}
	}
	if header != nil && header.SystemPrompt != "" {
		s.system = header.SystemPrompt
	}
	if c.Tools != nil {
		s.tools = filterTools(cfg.Tools, c.Tools)
	}
	s.provider = cfg.Providers[s.model.Provider]
	h.mu.phase = PhaseIdle
	h.mu.settings = s
	h.mu.messages = c.Messages
	h.mu.recorded.text, h.mu.recorded.ok = recordedPrompt(path)
	h.mu.idle = make(chan struct{})
	close(h.mu.idle)
	return h, nil
}

func (h *Harness) resolve(ref string) (llm.Model, bool) {
	if h.cfg.Models == nil {
		return llm.Model{}, false
	}
	m, ok := h.cfg.Models(ref)
	if !ok {
		return m, false
	}
	_, ok = h.cfg.Providers[m.Provider]
	return m, ok
}

func filterTools(all []tool.Tool, names []string) []tool.Tool {
	out := make([]tool.Tool, 0, len(names))
	for _, t := range all {
		if slices.Contains(names, t.Spec().Name) {
			out = append(out, t)
		}
	}
	return out
}

// Hooks returns the harness's hook registry, to register handlers on.
func (h *Harness) Hooks() *hook.Registry { return h.hooks }

// Phase returns what the harness is doing now.
func (h *Harness) Phase() Phase {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mu.phase
}

// Messages returns a copy of the context of the active leaf as the
// harness last knew it.
func (h *Harness) Messages() []events.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.mu.messages)
}

// Model returns the model the next model call will use.
func (h *Harness) Model() llm.Model {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mu.settings.model
}

// WaitIdle returns when the harness is idle, or with ctx's error.
func (h *Harness) WaitIdle(ctx context.Context) error {
	h.mu.Lock()
	idle := h.mu.idle
	h.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// begin moves from idle to phase, or fails with ErrBusy.
func (h *Harness) begin(phase Phase) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.phase != PhaseIdle {
		return fmt.Errorf("%w (%s)", ErrBusy, h.mu.phase)
	}
	h.mu.phase = phase
	h.mu.idle = make(chan struct{})
	return nil
}

func (h *Harness) setPhase(p Phase) {
	h.mu.Lock()
	h.mu.phase = p
	h.mu.Unlock()
}

// end flushes held writes and returns to idle.
func (h *Harness) end(ctx context.Context) error {
	err := h.flush(ctx)
	h.mu.Lock()
	h.mu.phase = PhaseIdle
	h.mu.cancel = nil
	close(h.mu.idle)
	h.mu.Unlock()
	return err
}

// publish delivers an event to the sink, stamped with the session id and
// the next sequence number. Events reach the sink one at a time, in
// sequence order. A sink may call back into the harness (say, Abort or
// Steer): the events that causes are delivered after the current one
// returns, by whichever goroutine is delivering.
func (h *Harness) publish(ev events.Event) {
	if h.cfg.Sink == nil {
		return
	}
	h.out.Lock()
	ev.SessionID = h.cfg.SessionID
	ev.Seq = h.seq.Add(1)
	h.out.queue = append(h.out.queue, ev)
	if h.out.draining {
		h.out.Unlock()
		return
	}
	h.out.draining = true
	for len(h.out.queue) > 0 {
		batch := h.out.queue
		h.out.queue = h.out.spare[:0]
		h.out.Unlock()
		for i := range batch {
			h.cfg.Sink(batch[i])
		}
		clear(batch) // drop references for the collector
		h.out.Lock()
		h.out.spare = batch
	}
	h.out.draining = false
	h.out.Unlock()
}
