package orchestrator

import (
	"context"
	"fmt"
	"github.com/cairn-agents/cairn/pkg/events"

	"github.com/cairn-agents/cairn/pkg/toolbus"
)

// consumeResults routes tool results to the resident sessions they belong
// to. A result for a session that is not in memory waits in the stream: the
// session finds it when it is loaded.
//
// It reads the results stored from now on through the bus, whose reader
// keeps going when the NATS node serving it is lost and stays down (an
// ordered consumer of nats.go could be recreated on the dead node and stop
// for good; see pkg/follow).
func (o *Orchestrator) consumeResults(ctx context.Context) (func(), error) {
	stop, err := o.bus.ConsumeResults(ctx, events.SessionRef{}, func(r toolbus.Result) {
		if r.Err != nil {
			return // garbage: not ours to handle here
		}
		o.mu.Lock()
		a := o.mu.actors[r.Session()]
		o.mu.Unlock()
		if a != nil {
			a.enqueue(item{result: &r.ToolResult})
		}
	}, toolbus.OnlyNew())
	if err != nil {
		return nil, fmt.Errorf("orchestrator: results consumer: %w", err)
	}
	return stop, nil
}
