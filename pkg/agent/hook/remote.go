package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Caller sends one hook event to a remote handler and returns its answer:
// the JSON of the event's result type. The NATS request/reply adapter
// implements it; so can anything else.
type Caller interface {
	Call(ctx context.Context, hook string, event []byte) ([]byte, error)
}

// Policy says how long a remote handler may take and what a failure means.
type Policy struct {
	// Timeout bounds one call; 0 means 2 seconds.
	Timeout time.Duration
	// FailOpen makes a failed or late call count as "no opinion" (the zero
	// result). Without it the failure is the handler's error: reported, and
	// for tool_call it blocks the call (fail closed).
	FailOpen bool
}

// ErrRemote wraps every failure of a remote handler.
var ErrRemote = errors.New("remote hook failed")

// OnRemote registers a handler for E that forwards each event to c as JSON
// and decodes the answer as R. An empty answer means the zero result.
func OnRemote[E Event[R], R any](r *Registry, c Caller, p Policy) (off func()) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return On(r, func(ctx context.Context, ev E) (R, error) {
		var res R
		err := callRemote(ctx, c, ev, &res, timeout)
		if err != nil && p.FailOpen {
			var zero R
			return zero, nil
		}
		return res, err
	})
}

func callRemote[E Event[R], R any](ctx context.Context, c Caller, ev E, res *R, timeout time.Duration) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("%w: encode %s event: %v", ErrRemote, ev.Name(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answer, err := c.Call(ctx, ev.Name(), body)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRemote, ev.Name(), err)
	}
	if len(answer) == 0 {
		return nil
	}
	if err := json.Unmarshal(answer, res); err != nil {
		return fmt.Errorf("%w: %s: bad answer: %v", ErrRemote, ev.Name(), err)
	}
	return nil
}
