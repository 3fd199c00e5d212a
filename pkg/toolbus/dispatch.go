package toolbus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/nats-io/nats.go"
)

// Dispatch publishes call for the workers of pool and returns once
// CAIRN_TOOLS has stored it. Publishing the same call again (same session and
// tool call id) within the stream's duplicate window stores nothing new, so a
// retried dispatch is safe. Dispatched is set to now if empty. The call is
// published on cairn.tool.<pool>.<tenant>.<tool>; the result arrives on
// cairn.result.<tenant>.<sid>; see [Bus.ConsumeResults].
func (b *Bus) Dispatch(ctx context.Context, pool string, call events.ToolCall) error {
	msg, err := b.callMsg(pool, call)
	if err != nil {
		return err
	}
	// The worker continues the caller's trace from these headers.
	telemetry.Inject(ctx, msg.Header)
	if _, err := b.js.PublishMsg(ctx, msg); err != nil {
		return fmt.Errorf("toolbus: dispatch %s/%s to pool %s: %w", call.SessionID, call.ToolCallID, pool, err)
	}
	return nil
}

func (b *Bus) callMsg(pool string, call events.ToolCall) (*nats.Msg, error) {
	if err := validatePool(pool); err != nil {
		return nil, err
	}
	if err := validateCallID(call.ToolCallID); err != nil {
		return nil, err
	}
	if call.Dispatched == "" {
		call.Dispatched = time.Now().UTC().Format(time.RFC3339Nano)
	}
	if call.Arguments == nil {
		call.Arguments = json.RawMessage("{}")
	}
	data, err := call.Encode()
	if err != nil {
		return nil, err
	}
	// Validate exactly as a worker will, so a bad call fails here, not there.
	if _, err := events.DecodeToolCall(data); err != nil {
		return nil, err
	}
	r := call.Session()
	msg := nats.NewMsg(b.names.ToolSubject(pool, r.Tenant, call.Name))
	msg.Data = data
	msg.Header.Set(events.HeaderMsgID, CallMsgID(r, call.ToolCallID))
	return msg, nil
}

// CancelRequest is the body of a message on cairn.cancel.<tenant>.<sid>. An empty list
// (or an empty body) cancels every running call of the session.
type CancelRequest struct {
	ToolCallIDs []string `json:"toolCallIds,omitempty"`
	Reason      string   `json:"reason,omitempty"`
}

// Cancel asks every worker to cancel the running calls of session r (all of
// them when toolCallIDs is empty). It is core NATS, fire and forget: a worker
// that is disconnected at that moment misses it and the call runs to its
// timeout. A cancelled call still gets its one result, an error saying it was
// cancelled. Calls still waiting in the queue are not affected.
func (b *Bus) Cancel(ctx context.Context, sid events.SessionRef, toolCallIDs ...string) error {
	if err := sid.Validate(); err != nil {
		return err
	}
	data, err := json.Marshal(CancelRequest{ToolCallIDs: toolCallIDs, Reason: "session aborted"})
	if err != nil {
		return err
	}
	if err := b.nc.Publish(b.names.CancelSubject(sid), data); err != nil {
		return fmt.Errorf("toolbus: cancel %s: %w", sid, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	return b.nc.FlushWithContext(ctx)
}
