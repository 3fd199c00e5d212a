package events

import (
	"encoding/json"
	"time"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// Entry types (DESIGN §3). The first group is pi's; the rest are Cairn's.
const (
	EntrySession             = "session"
	EntryMessage             = "message"
	EntryModelChange         = "model_change"
	EntryThinkingLevelChange = "thinking_level_change"
	EntryActiveToolsChange   = "active_tools_change"
	EntryCompaction          = "compaction"
	EntryBranchSummary       = "branch_summary"
	EntryLabel               = "label"
	EntryCustom              = "custom"
	EntryCustomMessage       = "custom_message"
	EntrySessionInfo         = "session_info"

	// EntryLeaf records a move of the active position: navigation is durable.
	EntryLeaf = "leaf"
	// EntryTurnInterrupted closes a turn a crash cut short.
	EntryTurnInterrupted = "turn_interrupted"
	// EntryCommandRejected records a command the orchestrator refused, and why.
	EntryCommandRejected = "command_rejected"
)

// RetryMark is the mark of an error message the harness retries (the entry's
// "retry" member, Cairn's): the run goes on after it, the failed model
// call being made again, after a back-off for a transient error or after
// compacting the context for an overflow. The mark is in the message's own
// entry, so no reader of the log ever sees the error without it. The run
// is not settled until a later assistant message or a turn_interrupted
// entry.
//
// Code RetryCompaction marks instead a reply that succeeded (any stop
// reason but error and aborted) after which the harness compacts the
// context at the save point (the context crossed the threshold): it has no
// attempt, and the run settles on the compaction entry that follows (or a
// turn_interrupted entry closing a compaction never made), not on the
// reply itself.
type RetryMark struct {
	Attempt int    // 1 for the first retry; 0 for RetryCompaction
	DelayMs int64  // the back-off; 0 when the retry follows a compaction
	Code    string // RetryTransient, RetryOverflow or RetryCompaction
}

// Codes of a retry mark.
const (
	RetryTransient = "transient" // overload, rate limit, 5xx, network: after a back-off
	RetryOverflow  = "overflow"  // the context overflowed: after a compaction
	// RetryCompaction: no retry; a compaction follows the reply it marks.
	RetryCompaction = "compaction"
)

// PiVersion is the pi session format version Cairn's entries follow.
const PiVersion = 3

// TimeFormat is the layout of entry timestamps: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats t as an entry timestamp.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Entry is one immutable entry of a session log. Type decides which fields
// are meaningful; the canonical JSON writes only those.
//
// The `session` entry is the log's header: its ID is the session id and it has
// no parent. Every other entry is a node of the session tree: ParentID is nil
// for a root (the first entry of a conversation, or a new root after
// navigating before the first entry) and otherwise names an earlier entry.
type Entry struct {
	V         int     // schema version; 0 when written to a pi file
	Type      string  //
	ID        string  //
	ParentID  *string // nil = root of the tree (never set on `session`)
	Timestamp string  // see TimeFormat
	CommandID string  // the command whose effect this entry is (Cairn)
	// Principal is who sent that command (Command.Principal), when the
	// gateway authenticated it (Cairn).
	Principal string

	// ParentDigest is the digest of the entry before this one on the session's
	// subject (empty for the first): the log is a hash chain (Cairn).
	ParentDigest string

	// session
	Version       int               // pi format version of the header
	Cwd           string            // workspace directory
	ParentSession string            // the session this one was forked from
	Model         string            // initial model, provider/model
	ThinkingLevel string            // also thinking_level_change
	SystemPrompt  string            //
	Tools         []string          // initial active tools
	Labels        map[string]string // session labels
	Tenant        string            //
	// ParentToolCallID is the parent's task call that started this
	// session (ParentSession then names the parent); TaskDepth its depth
	// under top-level sessions, 1 for a parent's child (task.go).
	ParentToolCallID string
	TaskDepth        int

	// message
	Message *Message
	Retry   *RetryMark // an error message that is retried (Cairn)

	// model_change
	Provider string
	ModelID  string

	// active_tools_change
	ActiveToolNames []string

	// compaction, branch_summary
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int64
	FromID           string
	Details          json.RawMessage // also custom_message
	FromHook         bool

	// label (TargetID set, Label "" clears); leaf (TargetID nil = before the
	// first entry)
	TargetID *string
	Label    string

	// custom, custom_message
	CustomType string
	Data       json.RawMessage
	Content    Content
	Display    bool

	// session_info
	Name string

	// approvals_change; also session: the approval policy (DESIGN §11)
	Approvals *Approvals

	// approval_requested, approval_answered, tool_result_held (Message)
	ToolCallID string          // the model's id of the call
	ToolName   string          // approval_requested
	Arguments  json.RawMessage // approval_requested: as asked; approval_answered: as edited
	ExpiresAt  string          // approval_requested: when it is denied as expired ("" = never)
	Decision   string          // approval_answered: approve, deny, expire or abort
	// task_started: the child session the call started (also ToolCallID,
	// ToolName, Arguments)
	ChildSessionID string

	// turn_interrupted, command_rejected, approval_answered
	Reason string
	Code   string // command_rejected: a machine-readable reason, e.g. "busy"

	Extra Extra
}

// IsTreeNode reports whether e is a node of the session tree (every entry but
// the header).
func (e *Entry) IsTreeNode() bool { return e.Type != EntrySession }

// MarshalJSON writes the canonical form of e.
func (e Entry) MarshalJSON() ([]byte, error) {
	w := jsonx.Writer{B: make([]byte, 0, sizeHint(e.size())), InEnvelope: true}
	e.write(&w)
	return w.Result()
}

// write writes the canonical form of e.
func (e *Entry) write(w *jsonx.Writer) {
	n := w.Begin()
	if e.V != 0 {
		w.Int("v", int64(e.V))
	}
	w.Str("type", e.Type)
	if e.Type == EntrySession {
		w.Int("version", int64(e.Version))
	}
	w.Str("id", e.ID)
	if e.Type != EntrySession {
		w.NullableStr("parentId", e.ParentID)
	}
	w.Str("timestamp", e.Timestamp)
	w.OptStr("commandId", e.CommandID)
	w.OptStr("principal", e.Principal)
	w.OptStr("parentDigest", e.ParentDigest)
	switch e.Type {
	case EntrySession:
		w.OptStr("cwd", e.Cwd)
		w.OptStr("parentSession", e.ParentSession)
		w.OptStr("model", e.Model)
		w.OptStr("thinkingLevel", e.ThinkingLevel)
		w.OptStr("systemPrompt", e.SystemPrompt)
		if e.Tools != nil {
			w.Strs("tools", e.Tools)
		}
		if len(e.Labels) > 0 {
			w.StrMap("labels", e.Labels)
		}
		w.OptStr("tenant", e.Tenant)
		writeApprovals(w, e.Approvals)
		w.OptStr("parentToolCallId", e.ParentToolCallID)
		w.OptInt("taskDepth", int64(e.TaskDepth))
	case EntryTaskStarted:
		writeParkedCall(w, e)
		w.Str("childSessionId", e.ChildSessionID)
	case EntryApprovalsChange:
		if e.Approvals == nil {
			e := Approvals{}
			writeApprovals(w, &e)
		} else {
			writeApprovals(w, e.Approvals)
		}
	case EntryApprovalRequested:
		writeParkedCall(w, e)
		w.OptStr("expiresAt", e.ExpiresAt)
	case EntryApprovalAnswered:
		w.Str("toolCallId", e.ToolCallID)
		w.Str("decision", e.Decision)
		w.OptRaw("arguments", e.Arguments)
		w.OptStr("reason", e.Reason)
	case EntryToolResultHeld:
		w.Str("toolCallId", e.ToolCallID)
		w.Key("message")
		if e.Message == nil {
			w.B = append(w.B, "null"...)
		} else {
			e.Message.write(w)
		}
	case EntryMessage:
		w.Key("message")
		if e.Message == nil {
			w.B = append(w.B, "null"...)
		} else {
			e.Message.write(w)
		}
		if r := e.Retry; r != nil {
			w.Key("retry")
			n := w.Begin()
			if r.Code != RetryCompaction {
				w.Int("attempt", int64(r.Attempt))
			}
			w.OptInt("delayMs", r.DelayMs)
			w.Str("code", r.Code)
			w.End(n)
		}
	case EntryModelChange:
		w.Str("provider", e.Provider)
		w.Str("modelId", e.ModelID)
	case EntryThinkingLevelChange:
		w.Str("thinkingLevel", e.ThinkingLevel)
	case EntryActiveToolsChange:
		names := e.ActiveToolNames
		if names == nil {
			names = []string{}
		}
		w.Strs("activeToolNames", names)
	case EntryCompaction:
		w.Str("summary", e.Summary)
		w.Str("firstKeptEntryId", e.FirstKeptEntryID)
		w.Int("tokensBefore", e.TokensBefore)
		w.OptRaw("details", e.Details)
		w.OptBool("fromHook", e.FromHook)
	case EntryBranchSummary:
		w.Str("fromId", e.FromID)
		w.Str("summary", e.Summary)
		w.OptRaw("details", e.Details)
		w.OptBool("fromHook", e.FromHook)
	case EntryLabel:
		w.NullableStr("targetId", e.TargetID)
		w.OptStr("label", e.Label)
	case EntryCustom:
		w.Str("customType", e.CustomType)
		w.OptRaw("data", e.Data)
	case EntryCustomMessage:
		w.Str("customType", e.CustomType)
		w.Key("content")
		e.Content.write(w)
		w.Bool("display", e.Display)
		w.OptRaw("details", e.Details)
	case EntrySessionInfo:
		w.OptStr("name", e.Name)
	case EntryLeaf:
		w.NullableStr("targetId", e.TargetID)
	case EntryTurnInterrupted:
		w.Str("reason", e.Reason)
	case EntryCommandRejected:
		w.Str("reason", e.Reason)
		w.OptStr("code", e.Code)
	}
	w.Extra(e.Extra)
	w.End(n)
}

// UnmarshalJSON decodes and validates an entry.
func (e *Entry) UnmarshalJSON(data []byte) error { return e.decode(data) }

// DecodeEntry decodes and validates one entry.
func DecodeEntry(data []byte) (Entry, error) {
	var e Entry
	err := e.decode(data)
	return e, err
}

func (e *Entry) decode(data []byte) error {
	r, err := readObject(data)
	if err != nil {
		return err
	}
	defer r.Release()
	*e = Entry{}
	e.V = int(r.Int64("v", false))
	if r.Err() == nil && e.V != 0 && e.V != SchemaVersion {
		r.Fail("v", "unsupported schema version %d (this build reads %d)", e.V, SchemaVersion)
	}
	e.Type = r.Name("type", true, names)
	e.ID = r.Str("id", true)
	if r.Err() == nil {
		what := "entry id"
		if e.Type == EntrySession {
			what = "session id"
		}
		if err := validateID("id", what, e.ID); err != nil {
			return err
		}
	}
	if e.Type != EntrySession && r.Err() == nil {
		e.ParentID = r.NullableStr("parentId")
		if e.ParentID != nil && r.Err() == nil {
			if err := validateID("parentId", "entry id", *e.ParentID); err != nil {
				return err
			}
		}
	}
	e.Timestamp = r.Str("timestamp", true)
	if r.Err() == nil {
		if !validTimestamp(e.Timestamp) {
			r.Fail("timestamp", "must be an RFC 3339 time, got %q", e.Timestamp)
		}
	}
	e.CommandID = r.Str("commandId", false)
	e.Principal = r.Str("principal", false)
	if problem := principalProblem(e.Principal); problem != "" && r.Err() == nil {
		r.Fail("principal", "%s", problem)
	}
	e.ParentDigest = r.Str("parentDigest", false)
	switch e.Type {
	case EntrySession:
		e.Version = int(r.Int64("version", false))
		e.Cwd = r.Str("cwd", false)
		e.ParentSession = r.Str("parentSession", false)
		e.Model = r.Str("model", false)
		e.ThinkingLevel = r.Str("thinkingLevel", false)
		e.SystemPrompt = r.Str("systemPrompt", false)
		e.Tools = r.Strings("tools", false)
		r.Object("labels", false, func(b []byte, p jsonx.Path) error {
			var labels map[string]string // a local: &e.Labels would put e on the heap
			err := json.Unmarshal(b, &labels)
			e.Labels = labels
			if err != nil {
				return fieldErr(p.String(), "must be an object of strings")
			}
			return nil
		})
		e.Tenant = r.Str("tenant", false)
		e.Approvals = readApprovals(&r, false)
		e.ParentToolCallID = r.Str("parentToolCallId", false)
		e.TaskDepth = int(r.Int64("taskDepth", false))
		if r.Err() == nil && (e.TaskDepth < 0 || e.TaskDepth > MaxTaskDepth) {
			r.Fail("taskDepth", "must be 0 to %d, got %d", MaxTaskDepth, e.TaskDepth)
		}
		if r.Err() == nil && e.ParentToolCallID != "" && e.ParentSession == "" {
			r.Fail("parentSession", "is required with parentToolCallId (the session whose call started this one)")
		}
	case EntryTaskStarted:
		readParkedCall(&r, e)
		e.ChildSessionID = r.Str("childSessionId", true)
		if r.Err() == nil {
			if err := validateID("childSessionId", "session id", e.ChildSessionID); err != nil {
				return err
			}
		}
	case EntryApprovalsChange:
		e.Approvals = readApprovals(&r, true)
	case EntryApprovalRequested:
		readParkedCall(&r, e)
		e.ExpiresAt = r.Str("expiresAt", false)
		if r.Err() == nil && e.ExpiresAt != "" && !validTimestamp(e.ExpiresAt) {
			r.Fail("expiresAt", "must be an RFC 3339 time, got %q", e.ExpiresAt)
		}
	case EntryApprovalAnswered:
		e.ToolCallID = r.Str("toolCallId", true)
		e.Decision = r.Str("decision", true)
		e.Arguments = r.Raw("arguments", false)
		e.Reason = r.Str("reason", false)
		if r.Err() == nil {
			switch e.Decision {
			case DecisionApprove, DecisionDeny, DecisionExpire, DecisionAbort:
			default:
				r.Fail("decision", "must be approve, deny, expire or abort, got %q", e.Decision)
			}
		}
	case EntryToolResultHeld:
		e.ToolCallID = r.Str("toolCallId", true)
		r.Object("message", true, func(b []byte, p jsonx.Path) error {
			e.Message = new(Message)
			if err := e.Message.decode(b, p); err != nil {
				return err
			}
			if e.Message.Role != RoleToolResult {
				return fieldErr(p.Key("role").String(), "must be toolResult")
			}
			return nil
		})
	case EntryMessage:
		r.Object("message", true, func(b []byte, p jsonx.Path) error {
			e.Message = new(Message)
			if err := e.Message.decode(b, p); err != nil {
				return err
			}
			if e.Message.Role == RoleAssistant && e.Message.StopReason == "" {
				return fieldErr(p.Key("stopReason").String(), "is required")
			}
			return nil
		})
		r.Object("retry", false, func(b []byte, p jsonx.Path) error {
			rt, err := decodeRetry(b, p)
			switch {
			case err != nil:
			case rt.Code == RetryCompaction:
				if m := e.Message; m == nil || m.Role != RoleAssistant || m.StopReason == StopError || m.StopReason == StopAborted {
					err = fieldErr(p.String(), "with code compaction marks only an assistant message that did not stop with an error or abort")
				}
			case e.Message == nil || e.Message.StopReason != StopError:
				err = fieldErr(p.String(), "marks only an assistant message that stopped with an error")
			}
			e.Retry = rt
			return err
		})
	case EntryModelChange:
		e.Provider = r.Str("provider", true)
		e.ModelID = r.Str("modelId", true)
	case EntryThinkingLevelChange:
		e.ThinkingLevel = r.Str("thinkingLevel", true)
	case EntryActiveToolsChange:
		e.ActiveToolNames = r.Strings("activeToolNames", true)
	case EntryCompaction:
		e.Summary = r.Str("summary", true)
		e.FirstKeptEntryID = r.Str("firstKeptEntryId", true)
		e.TokensBefore = r.Int64("tokensBefore", false)
		e.Details = r.Raw("details", false)
		e.FromHook = r.Bool("fromHook", false)
	case EntryBranchSummary:
		e.FromID = r.Str("fromId", true)
		e.Summary = r.Str("summary", true)
		e.Details = r.Raw("details", false)
		e.FromHook = r.Bool("fromHook", false)
	case EntryLabel:
		if target := r.Str("targetId", true); r.Err() == nil {
			e.TargetID = &target
		}
		e.Label = r.Str("label", false)
	case EntryCustom:
		e.CustomType = r.Str("customType", true)
		e.Data = r.Raw("data", false)
	case EntryCustomMessage:
		e.CustomType = r.Str("customType", true)
		r.Object("content", true, func(b []byte, p jsonx.Path) error { return e.Content.decode(b, p) })
		e.Display = r.Bool("display", false)
		e.Details = r.Raw("details", false)
	case EntrySessionInfo:
		e.Name = r.Str("name", false)
	case EntryLeaf:
		e.TargetID = r.NullableStr("targetId")
	case EntryTurnInterrupted:
		e.Reason = r.Str("reason", true)
	case EntryCommandRejected:
		e.Reason = r.Str("reason", true)
		e.Code = r.Str("code", false)
		if r.Err() == nil && e.CommandID == "" {
			r.Fail("commandId", "is required")
		}
	case "":
	default:
		r.Fail("type", "unknown entry type %q", e.Type)
	}
	if r.Err() != nil {
		return fieldError(r.Err())
	}
	e.Extra = r.Rest()
	return nil
}

func decodeRetry(b []byte, p jsonx.Path) (*RetryMark, error) {
	var v struct {
		Attempt *int   `json:"attempt"`
		DelayMs int64  `json:"delayMs"`
		Code    string `json:"code"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fieldErr(p.String(), "must be an object {attempt, delayMs, code}")
	}
	if v.Code == RetryCompaction {
		if v.Attempt != nil || v.DelayMs != 0 {
			return nil, fieldErr(p.String(), "with code compaction has no attempt and no delayMs")
		}
		return &RetryMark{Code: v.Code}, nil
	}
	if v.Attempt == nil || *v.Attempt < 1 {
		return nil, fieldErr(p.Key("attempt").String(), "is required (1 or more)")
	}
	if v.Code == "" {
		return nil, fieldErr(p.Key("code").String(), "is required")
	}
	return &RetryMark{Attempt: *v.Attempt, DelayMs: v.DelayMs, Code: v.Code}, nil
}

func writeApprovals(w *jsonx.Writer, a *Approvals) {
	if a == nil {
		return
	}
	b, err := a.MarshalJSON()
	if err != nil {
		return // a map of strings always encodes
	}
	w.Raw("approvals", b)
}

func readApprovals(r *jsonx.Reader, required bool) *Approvals {
	b := r.Raw("approvals", required)
	if b == nil || r.Err() != nil {
		return nil
	}
	a, err := DecodeApprovals("approvals", b)
	if err != nil {
		r.SetErr(err)
		return nil
	}
	return a
}

// writeParkedCall writes the call a task_started or approval_requested
// entry parks: its id, tool and arguments ({} when it has none).
func writeParkedCall(w *jsonx.Writer, e *Entry) {
	w.Str("toolCallId", e.ToolCallID)
	w.Str("toolName", e.ToolName)
	if len(e.Arguments) == 0 {
		w.Key("arguments")
		w.B = append(w.B, "{}"...)
	} else {
		w.Raw("arguments", e.Arguments)
	}
}

// readParkedCall reads what writeParkedCall writes; every field required.
func readParkedCall(r *jsonx.Reader, e *Entry) {
	e.ToolCallID = r.Str("toolCallId", true)
	e.ToolName = r.Str("toolName", true)
	e.Arguments = r.Raw("arguments", true)
}
