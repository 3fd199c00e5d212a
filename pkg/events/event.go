package events

import (
	"encoding/json"
	"strconv"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// Agent event types: the live stream of what an agent does (DESIGN §5),
// published on cairn.events.<tenant>.<sid>. Events may be lost without harm; the log is
// the record.
const (
	EvAgentStart          = "agent_start"
	EvAgentEnd            = "agent_end"
	EvTurnStart           = "turn_start"
	EvTurnEnd             = "turn_end"
	EvMessageStart        = "message_start"
	EvMessageUpdate       = "message_update"
	EvMessageEnd          = "message_end"
	EvToolExecutionStart  = "tool_execution_start"
	EvToolExecutionUpdate = "tool_execution_update"
	EvToolExecutionEnd    = "tool_execution_end"
	EvQueueUpdate         = "queue_update"
	EvCompactionStart     = "compaction_start"
	EvCompactionEnd       = "compaction_end"
	EvRetryStart          = "auto_retry_start"
	EvRetryEnd            = "auto_retry_end"
	EvHookError           = "hook_error"
	EvCommandRejected     = "command_rejected"
)

var eventTypes = map[string]bool{
	EvAgentStart: true, EvAgentEnd: true, EvTurnStart: true, EvTurnEnd: true,
	EvMessageStart: true, EvMessageUpdate: true, EvMessageEnd: true,
	EvToolExecutionStart: true, EvToolExecutionUpdate: true, EvToolExecutionEnd: true,
	EvQueueUpdate: true, EvCompactionStart: true, EvCompactionEnd: true,
	EvRetryStart: true, EvRetryEnd: true, EvHookError: true, EvCommandRejected: true,
	EvApprovalRequested: true, EvApprovalAnswered: true,
}

// Delta kinds of a message_update.
const (
	DeltaText     = "text"
	DeltaThinking = "thinking"
	DeltaToolCall = "toolCall" // a fragment of a tool call's JSON arguments
)

// Delta is one streamed fragment of an assistant message.
type Delta struct {
	Kind         string `json:"kind"`
	ContentIndex int    `json:"contentIndex"`
	Delta        string `json:"delta"`
	ToolCallID   string `json:"toolCallId,omitempty"` // toolCall deltas
	ToolName     string `json:"toolName,omitempty"`   // toolCall deltas
}

// Queue is the content of the steering and follow-up queues.
type Queue struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// Retry describes an automatic retry of a failed provider call.
type Retry struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	Success      bool   `json:"success,omitempty"` // auto_retry_end
}

// Compaction describes a compaction in progress or done.
type Compaction struct {
	Reason       string `json:"reason"` // manual | threshold | overflow
	TokensBefore int64  `json:"tokensBefore,omitempty"`
	Summary      string `json:"summary,omitempty"`
	EntryID      string `json:"entryId,omitempty"`
	Aborted      bool   `json:"aborted,omitempty"`
	Error        string `json:"error,omitempty"`
	// WillRetry (compaction_end): the failed model call is made again from
	// the compacted context (overflow recovery), as in pi.
	WillRetry bool `json:"willRetry,omitempty"`
}

// Event is one live agent event. Type decides which fields are set.
type Event struct {
	V         int    `json:"v"`
	Type      string `json:"type"`
	SessionID string `json:"sessionId,omitempty"`
	Seq       uint64 `json:"seq,omitempty"` // per-session event sequence, for resuming streams
	Time      string `json:"time,omitempty"`

	// message_*; turn_end's assistant message; agent_end's new messages
	Message     *Message  `json:"message,omitempty"`
	Delta       *Delta    `json:"delta,omitempty"`
	ToolResults []Message `json:"toolResults,omitempty"` // turn_end
	Messages    []Message `json:"messages,omitempty"`    // agent_end

	// tool_execution_*
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Partial    *Message        `json:"partial,omitempty"` // update: the result so far
	Result     *Message        `json:"result,omitempty"`  // end
	IsError    bool            `json:"isError,omitempty"`

	Queue      *Queue      `json:"queue,omitempty"`
	Retry      *Retry      `json:"retry,omitempty"`
	Compaction *Compaction `json:"compaction,omitempty"`

	// approval_requested, approval_answered
	Approval *Approval `json:"approval,omitempty"`

	// hook_error, command_rejected
	Hook      string `json:"hook,omitempty"`
	CommandID string `json:"commandId,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Encode writes the canonical JSON of ev with the current schema version.
func (ev Event) Encode() ([]byte, error) {
	w := jsonx.Writer{B: make([]byte, 0, sizeHint(ev.size())), InEnvelope: true}
	n := w.Begin()
	w.Int("v", SchemaVersion)
	w.Str("type", ev.Type)
	w.OptStr("sessionId", ev.SessionID)
	if ev.Seq != 0 {
		w.Key("seq")
		w.B = strconv.AppendUint(w.B, ev.Seq, 10)
	}
	w.OptStr("time", ev.Time)
	writeOptMessage(&w, "message", ev.Message)
	if d := ev.Delta; d != nil {
		w.Key("delta")
		n := w.Begin()
		w.Str("kind", d.Kind)
		w.Int("contentIndex", int64(d.ContentIndex))
		w.Str("delta", d.Delta)
		w.OptStr("toolCallId", d.ToolCallID)
		w.OptStr("toolName", d.ToolName)
		w.End(n)
	}
	writeMessages(&w, "toolResults", ev.ToolResults)
	writeMessages(&w, "messages", ev.Messages)
	w.OptStr("toolCallId", ev.ToolCallID)
	w.OptStr("toolName", ev.ToolName)
	w.OptRaw("args", ev.Args)
	writeOptMessage(&w, "partial", ev.Partial)
	writeOptMessage(&w, "result", ev.Result)
	w.OptBool("isError", ev.IsError)
	if q := ev.Queue; q != nil {
		w.Key("queue")
		n := w.Begin()
		w.Strs("steering", q.Steering)
		w.Strs("followUp", q.FollowUp)
		w.End(n)
	}
	if r := ev.Retry; r != nil {
		w.Key("retry")
		n := w.Begin()
		w.Int("attempt", int64(r.Attempt))
		w.Int("maxAttempts", int64(r.MaxAttempts))
		w.OptInt("delayMs", r.DelayMs)
		w.OptStr("errorMessage", r.ErrorMessage)
		w.OptBool("success", r.Success)
		w.End(n)
	}
	if c := ev.Compaction; c != nil {
		w.Key("compaction")
		n := w.Begin()
		w.Str("reason", c.Reason)
		w.OptInt("tokensBefore", c.TokensBefore)
		w.OptStr("summary", c.Summary)
		w.OptStr("entryId", c.EntryID)
		w.OptBool("aborted", c.Aborted)
		w.OptStr("error", c.Error)
		w.OptBool("willRetry", c.WillRetry)
		w.End(n)
	}
	if a := ev.Approval; a != nil {
		w.Key("approval")
		n := w.Begin()
		w.Str("toolCallId", a.ToolCallID)
		w.OptStr("toolName", a.ToolName)
		w.OptRaw("arguments", a.Arguments)
		w.OptStr("expiresAt", a.ExpiresAt)
		w.OptStr("decision", a.Decision)
		w.OptStr("reason", a.Reason)
		w.OptStr("principal", a.Principal)
		w.OptStr("entryId", a.EntryID)
		w.End(n)
	}
	w.OptStr("hook", ev.Hook)
	w.OptStr("commandId", ev.CommandID)
	w.OptStr("error", ev.Error)
	w.End(n)
	return w.Result()
}

// DecodeEvent decodes and validates an event.
func DecodeEvent(data []byte) (Event, error) {
	var ev Event
	r, err := readObject(data)
	if err != nil {
		return ev, err
	}
	defer r.Release()
	// Messages are decoded by Message's strict decoder, with their paths.
	ev.Message = readMessage(&r, "message", false)
	ev.Partial = readMessage(&r, "partial", false)
	ev.Result = readMessage(&r, "result", false)
	ev.ToolResults = readMessages(&r, "toolResults")
	ev.Messages = readMessages(&r, "messages")
	if r.Err() != nil {
		return Event{}, fieldError(r.Err())
	}
	if err := r.DecodeKnown(&ev); err != nil {
		return Event{}, fieldError(err)
	}
	if ev.V == 0 {
		ev.V = SchemaVersion
	}
	if ev.V != SchemaVersion {
		return Event{}, fieldErr("v", "unsupported schema version %d (this build reads %d)", ev.V, SchemaVersion)
	}
	if ev.Type == "" {
		return Event{}, required("type")
	}
	if !eventTypes[ev.Type] {
		return Event{}, fieldErr("type", "unknown event type %q", ev.Type)
	}
	if ev.SessionID != "" {
		if err := validateID("sessionId", "session id", ev.SessionID); err != nil {
			return Event{}, err
		}
	}
	switch ev.Type {
	case EvMessageStart, EvMessageEnd:
		if ev.Message == nil {
			return Event{}, required("message")
		}
	case EvMessageUpdate:
		if ev.Delta == nil {
			return Event{}, required("delta")
		}
		switch ev.Delta.Kind {
		case DeltaText, DeltaThinking, DeltaToolCall:
		default:
			return Event{}, fieldErr("delta.kind", "unknown delta kind %q (want text, thinking or toolCall)", ev.Delta.Kind)
		}
	case EvToolExecutionStart, EvToolExecutionUpdate, EvToolExecutionEnd:
		if ev.ToolCallID == "" {
			return Event{}, required("toolCallId")
		}
		if ev.ToolName == "" {
			return Event{}, required("toolName")
		}
	case EvQueueUpdate:
		if ev.Queue == nil {
			return Event{}, required("queue")
		}
	case EvRetryStart, EvRetryEnd:
		if ev.Retry == nil {
			return Event{}, required("retry")
		}
	case EvCompactionStart, EvCompactionEnd:
		if ev.Compaction == nil {
			return Event{}, required("compaction")
		}
	}
	return ev, nil
}
