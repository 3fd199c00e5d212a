package hook

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
)

// ContextEvent is emitted before every model call with the messages about to
// be sent. Handlers see the previous handler's messages.
type ContextEvent struct {
	Messages []events.Message `json:"messages"`
}

// ContextResult replaces the messages; nil Messages leaves them unchanged.
type ContextResult struct {
	Messages []events.Message `json:"messages,omitempty"`
}

func (ContextEvent) Name() string         { return "context" }
func (ContextEvent) result(ContextResult) {}

// Context runs the context chain. The first failing handler fails the whole
// chain: its error is returned (and reported) and the caller must not send
// a half-rewritten context.
func Context(ctx context.Context, r *Registry, msgs []events.Message) ([]events.Message, error) {
	var failed error
	emit(ctx, r, ContextEvent{Messages: msgs},
		func(ev ContextEvent) ContextEvent { ev.Messages = msgs; return ev },
		func(res ContextResult) bool {
			if res.Messages != nil {
				msgs = res.Messages
			}
			return true
		},
		func(err error) bool { failed = err; return false })
	if failed != nil {
		return nil, fmt.Errorf("context hook: %w", failed)
	}
	return msgs, nil
}
