package toolbus

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publishAttempts bounds how often a worker tries to store a result before it
// hands the call back.
const publishAttempts = 4

// finish stores the result of a call that was never started and acks it.
func (s *Server) finish(msg jetstream.Msg, call events.ToolCall, r tool.Result, d time.Duration, interrupted bool) {
	s.finishKeyed(msg, call, r, d, interrupted, "")
}

// finishKeyed stores the one result of call, marks its start record done (if
// key is set) and only then acknowledges the message. If the result cannot be
// stored the message is handed back, to be answered on redelivery.
func (s *Server) finishKeyed(msg jetstream.Msg, call events.ToolCall, r tool.Result, d time.Duration, interrupted bool, key string) {
	tr := events.ToolResult{Tenant: call.Tenant, SessionID: call.SessionID, ToolCallID: call.ToolCallID, ToolName: call.Name,
		Content: r.Content, Details: r.Details, IsError: r.IsError, Terminate: r.Terminate,
		Interrupted: interrupted, DurationMs: d.Milliseconds(), Worker: s.w.Name}
	data, err := tr.Encode()
	if err == nil && int64(len(data)) > s.bus.nc.MaxPayload()-1024 {
		tr.Content = []events.Block{events.TextBlock(fmt.Sprintf(
			"tool %s produced a result of %d bytes, over the bus's limit of %d; the result was dropped", call.Name, len(data), s.bus.nc.MaxPayload()-1024))}
		tr.Details, tr.IsError = nil, true
		data, err = tr.Encode()
	}
	if err != nil {
		tr = events.ToolResult{Tenant: call.Tenant, SessionID: call.SessionID, ToolCallID: call.ToolCallID, ToolName: call.Name,
			Content: []events.Block{events.TextBlock("tool result could not be encoded: " + err.Error())}, IsError: true, Worker: s.w.Name}
		data, _ = tr.Encode()
	}
	m := nats.NewMsg(s.bus.names.ResultSubject(call.Session()))
	m.Data = data
	m.Header.Set(events.HeaderMsgID, ResultMsgID(call.Session(), call.ToolCallID))
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = s.bus.js.PublishMsg(ctx, m)
		cancel()
		if err == nil {
			break
		}
		if attempt == publishAttempts {
			s.log.Error("cannot store the result; handing the call back", "session", call.SessionID, "toolCall", call.ToolCallID, "err", err)
			_ = msg.NakWithDelay(time.Second)
			return
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	if key != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := markDone(ctx, s.starts, key, s.w.Name); err != nil {
			// The result's Msg-Id still dedups a second answer within the window.
			s.log.Warn("cannot mark the call done", "toolCall", call.ToolCallID, "err", err)
		}
		cancel()
	}
	if s.w.Observe != nil {
		s.w.Observe(tr)
	}
	if err := msg.Ack(); err != nil {
		s.log.Warn("ack failed; the call will be redelivered and acknowledged then", "toolCall", call.ToolCallID, "err", err)
	}
}
