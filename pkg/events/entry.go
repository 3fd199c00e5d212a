package events

import (
	"encoding/json"
	"time"
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
type RetryMark struct {
	Attempt int    // 1 for the first retry
	DelayMs int64  // the back-off; 0 when the retry follows a compaction
	Code    string // RetryTransient or RetryOverflow
}

// Codes of a retry mark.
const (
	RetryTransient = "transient" // overload, rate limit, 5xx, network: after a back-off
	RetryOverflow  = "overflow"  // the context overflowed: after a compaction
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

	// turn_interrupted, command_rejected
	Reason string
	Code   string // command_rejected: a machine-readable reason, e.g. "busy"

	Extra Extra
}

// IsTreeNode reports whether e is a node of the session tree (every entry but
// the header).
func (e *Entry) IsTreeNode() bool { return e.Type != EntrySession }

// MarshalJSON writes the canonical form of e.
func (e Entry) MarshalJSON() ([]byte, error) {
	w := jsonWriter{b: make([]byte, 0, sizeHint(e.size()))}
	e.write(&w)
	return w.result()
}

// write writes the canonical form of e.
func (e *Entry) write(w *jsonWriter) {
	n := w.begin()
	if e.V != 0 {
		w.int("v", int64(e.V))
	}
	w.str("type", e.Type)
	if e.Type == EntrySession {
		w.int("version", int64(e.Version))
	}
	w.str("id", e.ID)
	if e.Type != EntrySession {
		w.nullableStr("parentId", e.ParentID)
	}
	w.str("timestamp", e.Timestamp)
	w.optStr("commandId", e.CommandID)
	w.optStr("parentDigest", e.ParentDigest)
	switch e.Type {
	case EntrySession:
		w.optStr("cwd", e.Cwd)
		w.optStr("parentSession", e.ParentSession)
		w.optStr("model", e.Model)
		w.optStr("thinkingLevel", e.ThinkingLevel)
		w.optStr("systemPrompt", e.SystemPrompt)
		if e.Tools != nil {
			w.strs("tools", e.Tools)
		}
		if len(e.Labels) > 0 {
			w.strMap("labels", e.Labels)
		}
		w.optStr("tenant", e.Tenant)
	case EntryMessage:
		w.key("message")
		if e.Message == nil {
			w.b = append(w.b, "null"...)
		} else {
			e.Message.write(w)
		}
		if r := e.Retry; r != nil {
			w.key("retry")
			n := w.begin()
			w.int("attempt", int64(r.Attempt))
			w.optInt("delayMs", r.DelayMs)
			w.str("code", r.Code)
			w.end(n)
		}
	case EntryModelChange:
		w.str("provider", e.Provider)
		w.str("modelId", e.ModelID)
	case EntryThinkingLevelChange:
		w.str("thinkingLevel", e.ThinkingLevel)
	case EntryActiveToolsChange:
		names := e.ActiveToolNames
		if names == nil {
			names = []string{}
		}
		w.strs("activeToolNames", names)
	case EntryCompaction:
		w.str("summary", e.Summary)
		w.str("firstKeptEntryId", e.FirstKeptEntryID)
		w.int("tokensBefore", e.TokensBefore)
		w.optRaw("details", e.Details)
		w.optBool("fromHook", e.FromHook)
	case EntryBranchSummary:
		w.str("fromId", e.FromID)
		w.str("summary", e.Summary)
		w.optRaw("details", e.Details)
		w.optBool("fromHook", e.FromHook)
	case EntryLabel:
		w.nullableStr("targetId", e.TargetID)
		w.optStr("label", e.Label)
	case EntryCustom:
		w.str("customType", e.CustomType)
		w.optRaw("data", e.Data)
	case EntryCustomMessage:
		w.str("customType", e.CustomType)
		w.key("content")
		e.Content.write(w)
		w.boolean("display", e.Display)
		w.optRaw("details", e.Details)
	case EntrySessionInfo:
		w.optStr("name", e.Name)
	case EntryLeaf:
		w.nullableStr("targetId", e.TargetID)
	case EntryTurnInterrupted:
		w.str("reason", e.Reason)
	case EntryCommandRejected:
		w.str("reason", e.Reason)
		w.optStr("code", e.Code)
	}
	w.extra(e.Extra)
	w.end(n)
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
	defer r.release()
	*e = Entry{}
	e.V = int(r.int64("v", false))
	if r.err == nil && e.V != 0 && e.V != SchemaVersion {
		r.fail("v", "unsupported schema version %d (this build reads %d)", e.V, SchemaVersion)
	}
	e.Type = r.name("type", true)
	e.ID = r.str("id", true)
	if r.err == nil {
		what := "entry id"
		if e.Type == EntrySession {
			what = "session id"
		}
		if err := validateID("id", what, e.ID); err != nil {
			return err
		}
	}
	if e.Type != EntrySession && r.err == nil {
		e.ParentID = r.nullableStr("parentId")
		if e.ParentID != nil && r.err == nil {
			if err := validateID("parentId", "entry id", *e.ParentID); err != nil {
				return err
			}
		}
	}
	e.Timestamp = r.str("timestamp", true)
	if r.err == nil {
		if !validTimestamp(e.Timestamp) {
			r.fail("timestamp", "must be an RFC 3339 time, got %q", e.Timestamp)
		}
	}
	e.CommandID = r.str("commandId", false)
	e.ParentDigest = r.str("parentDigest", false)
	switch e.Type {
	case EntrySession:
		e.Version = int(r.int64("version", false))
		e.Cwd = r.str("cwd", false)
		e.ParentSession = r.str("parentSession", false)
		e.Model = r.str("model", false)
		e.ThinkingLevel = r.str("thinkingLevel", false)
		e.SystemPrompt = r.str("systemPrompt", false)
		e.Tools = r.strings("tools", false)
		r.object("labels", false, func(b []byte, p path) error {
			var labels map[string]string // a local: &e.Labels would put e on the heap
			err := json.Unmarshal(b, &labels)
			e.Labels = labels
			if err != nil {
				return fieldErr(p.String(), "must be an object of strings")
			}
			return nil
		})
		e.Tenant = r.str("tenant", false)
	case EntryMessage:
		r.object("message", true, func(b []byte, p path) error {
			e.Message = new(Message)
			if err := e.Message.decode(b, p); err != nil {
				return err
			}
			if e.Message.Role == RoleAssistant && e.Message.StopReason == "" {
				return fieldErr(p.key("stopReason").String(), "is required")
			}
			return nil
		})
		r.object("retry", false, func(b []byte, p path) error {
			rt, err := decodeRetry(b, p)
			if err == nil && (e.Message == nil || e.Message.StopReason != StopError) {
				err = fieldErr(p.String(), "marks only an assistant message that stopped with an error")
			}
			e.Retry = rt
			return err
		})
	case EntryModelChange:
		e.Provider = r.str("provider", true)
		e.ModelID = r.str("modelId", true)
	case EntryThinkingLevelChange:
		e.ThinkingLevel = r.str("thinkingLevel", true)
	case EntryActiveToolsChange:
		e.ActiveToolNames = r.strings("activeToolNames", true)
	case EntryCompaction:
		e.Summary = r.str("summary", true)
		e.FirstKeptEntryID = r.str("firstKeptEntryId", true)
		e.TokensBefore = r.int64("tokensBefore", false)
		e.Details = r.raw("details", false)
		e.FromHook = r.boolean("fromHook", false)
	case EntryBranchSummary:
		e.FromID = r.str("fromId", true)
		e.Summary = r.str("summary", true)
		e.Details = r.raw("details", false)
		e.FromHook = r.boolean("fromHook", false)
	case EntryLabel:
		if target := r.str("targetId", true); r.err == nil {
			e.TargetID = &target
		}
		e.Label = r.str("label", false)
	case EntryCustom:
		e.CustomType = r.str("customType", true)
		e.Data = r.raw("data", false)
	case EntryCustomMessage:
		e.CustomType = r.str("customType", true)
		r.object("content", true, func(b []byte, p path) error { return e.Content.decode(b, p) })
		e.Display = r.boolean("display", false)
		e.Details = r.raw("details", false)
	case EntrySessionInfo:
		e.Name = r.str("name", false)
	case EntryLeaf:
		e.TargetID = r.nullableStr("targetId")
	case EntryTurnInterrupted:
		e.Reason = r.str("reason", true)
	case EntryCommandRejected:
		e.Reason = r.str("reason", true)
		e.Code = r.str("code", false)
		if r.err == nil && e.CommandID == "" {
			r.fail("commandId", "is required")
		}
	case "":
	default:
		r.fail("type", "unknown entry type %q", e.Type)
	}
	if r.err != nil {
		return r.err
	}
	e.Extra = r.rest()
	return nil
}

func decodeRetry(b []byte, p path) (*RetryMark, error) {
	var v struct {
		Attempt *int   `json:"attempt"`
		DelayMs int64  `json:"delayMs"`
		Code    string `json:"code"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fieldErr(p.String(), "must be an object {attempt, delayMs, code}")
	}
	if v.Attempt == nil || *v.Attempt < 1 {
		return nil, fieldErr(p.key("attempt").String(), "is required (1 or more)")
	}
	if v.Code == "" {
		return nil, fieldErr(p.key("code").String(), "is required")
	}
	return &RetryMark{Attempt: *v.Attempt, DelayMs: v.DelayMs, Code: v.Code}, nil
}
