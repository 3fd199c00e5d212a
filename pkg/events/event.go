package events

import (
	"encoding/json"
	"strconv"
)

// Agent event types: the live stream of what an agent does (DESIGN §5),
// published on cairn.events.<sid>. Events may be lost without harm; the log is
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

	// hook_error, command_rejected
	Hook      string `json:"hook,omitempty"`
	CommandID string `json:"commandId,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Encode writes the canonical JSON of ev with the current schema version.
func (ev Event) Encode() ([]byte, error) {
	w := jsonWriter{b: make([]byte, 0, sizeHint(ev.size())), inEnvelope: true}
	n := w.begin()
	w.int("v", SchemaVersion)
	w.str("type", ev.Type)
	w.optStr("sessionId", ev.SessionID)
	if ev.Seq != 0 {
		w.key("seq")
		w.b = strconv.AppendUint(w.b, ev.Seq, 10)
	}
	w.optStr("time", ev.Time)
	w.optMessage("message", ev.Message)
	if d := ev.Delta; d != nil {
		w.key("delta")
		n := w.begin()
		w.str("kind", d.Kind)
		w.int("contentIndex", int64(d.ContentIndex))
		w.str("delta", d.Delta)
		w.optStr("toolCallId", d.ToolCallID)
		w.optStr("toolName", d.ToolName)
		w.end(n)
	}
	w.messages("toolResults", ev.ToolResults)
	w.messages("messages", ev.Messages)
	w.optStr("toolCallId", ev.ToolCallID)
	w.optStr("toolName", ev.ToolName)
	w.optRaw("args", ev.Args)
	w.optMessage("partial", ev.Partial)
	w.optMessage("result", ev.Result)
	w.optBool("isError", ev.IsError)
	if q := ev.Queue; q != nil {
		w.key("queue")
		n := w.begin()
		w.strs("steering", q.Steering)
		w.strs("followUp", q.FollowUp)
		w.end(n)
	}
	if r := ev.Retry; r != nil {
		w.key("retry")
		n := w.begin()
		w.int("attempt", int64(r.Attempt))
		w.int("maxAttempts", int64(r.MaxAttempts))
		w.optInt("delayMs", r.DelayMs)
		w.optStr("errorMessage", r.ErrorMessage)
		w.optBool("success", r.Success)
		w.end(n)
	}
	if c := ev.Compaction; c != nil {
		w.key("compaction")
		n := w.begin()
		w.str("reason", c.Reason)
		w.optInt("tokensBefore", c.TokensBefore)
		w.optStr("summary", c.Summary)
		w.optStr("entryId", c.EntryID)
		w.optBool("aborted", c.Aborted)
		w.optStr("error", c.Error)
		w.optBool("willRetry", c.WillRetry)
		w.end(n)
	}
	w.optStr("hook", ev.Hook)
	w.optStr("commandId", ev.CommandID)
	w.optStr("error", ev.Error)
	w.end(n)
	return w.result()
}

// optMessage writes m if it is not nil.
func (w *jsonWriter) optMessage(k string, m *Message) {
	if m != nil {
		w.key(k)
		m.write(w)
	}
}

// messages writes ms if there are any.
func (w *jsonWriter) messages(k string, ms []Message) {
	if len(ms) == 0 {
		return
	}
	w.key(k)
	w.b = append(w.b, '[')
	for i := range ms {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		ms[i].write(w)
	}
	w.b = append(w.b, ']')
}

// DecodeEvent decodes and validates an event.
func DecodeEvent(data []byte) (Event, error) {
	var ev Event
	r, err := readObject(data)
	if err != nil {
		return ev, err
	}
	defer r.release()
	// Messages are decoded by Message's strict decoder, with their paths.
	ev.Message = r.message("message", false)
	ev.Partial = r.message("partial", false)
	ev.Result = r.message("result", false)
	ev.ToolResults = r.messages("toolResults")
	ev.Messages = r.messages("messages")
	if r.err != nil {
		return Event{}, r.err
	}
	if err := r.decodeKnown(&ev); err != nil {
		return Event{}, err
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
