package agenttest

import (
	"context"
	"slices"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// Recorder is an llm.Provider that records every request it gets, then
// has Next answer it: tests compare what a provider was sent with what
// they expect (the context `/context` shows, say).
type Recorder struct {
	Next llm.Provider

	mu   sync.Mutex
	reqs []llm.Request
}

// Stream implements llm.Provider.
func (r *Recorder) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	c := *req
	c.Messages = slices.Clone(req.Messages)
	c.Tools = slices.Clone(req.Tools)
	r.mu.Lock()
	r.reqs = append(r.reqs, c)
	r.mu.Unlock()
	return r.Next.Stream(ctx, req, onDelta)
}

// Requests returns the requests received so far, oldest first.
func (r *Recorder) Requests() []llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// Last returns the last request received; ok is false before the first.
func (r *Recorder) Last() (req llm.Request, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		return llm.Request{}, false
	}
	return r.reqs[len(r.reqs)-1], true
}
