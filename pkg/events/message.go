package events

import (
	"encoding/json"
)

// Message roles (pi's message shapes).
const (
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleCustom            = "custom"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
	RoleBashExecution     = "bashExecution"
)

// StopReason says why an assistant message ended.
type StopReason string

const (
	StopEnd     StopReason = "stop"    // the model finished
	StopLength  StopReason = "length"  // the output limit cut it off
	StopToolUse StopReason = "toolUse" // the model wants tool results
	StopError   StopReason = "error"   // the call failed; see ErrorMessage
	StopAborted StopReason = "aborted" // the run was aborted
)

func (s StopReason) valid() bool {
	switch s {
	case StopEnd, StopLength, StopToolUse, StopError, StopAborted:
		return true
	}
	return false
}

// Message is one message of a conversation. Role decides which fields are
// meaningful; the canonical JSON writes only those.
type Message struct {
	Role      string
	Content   Content
	Timestamp int64 // Unix milliseconds, as pi writes it; 0 = not recorded

	// user
	CommandID string // the command that produced this message (Cairn)

	// assistant
	API          string
	Provider     string
	Model        string
	Usage        *Usage
	StopReason   StopReason
	ErrorMessage string
	ResponseID   string

	// toolResult (also ToolCallID's tool name)
	ToolCallID string
	ToolName   string
	Details    json.RawMessage // toolResult, custom
	IsError    bool

	// custom
	CustomType string
	Display    bool

	// branchSummary, compactionSummary
	Summary      string
	FromID       string
	TokensBefore int64

	// bashExecution (a command the user ran in pi's shell mode)
	Command            string
	Output             string
	ExitCode           *int64
	Cancelled          bool
	Truncated          bool
	FullOutputPath     string
	ExcludeFromContext bool

	Extra Extra
}

// ToolCalls returns the tool call blocks of an assistant message, in order.
func (m *Message) ToolCalls() []Block {
	var calls []Block
	for _, b := range m.Content.Blocks {
		if b.Type == BlockToolCall {
			calls = append(calls, b)
		}
	}
	return calls
}

// MarshalJSON writes the canonical form of m for its role.
func (m Message) MarshalJSON() ([]byte, error) {
	w := jsonWriter{b: make([]byte, 0, sizeHint(m.size()))}
	m.write(&w)
	return w.result()
}

// write writes the canonical form of m.
func (m *Message) write(w *jsonWriter) {
	n := w.begin()
	w.str("role", m.Role)
	switch m.Role {
	case RoleUser:
		w.key("content")
		m.Content.write(w)
		w.optStr("commandId", m.CommandID)
	case RoleAssistant:
		w.key("content")
		m.Content.write(w)
		w.optStr("api", m.API)
		w.optStr("provider", m.Provider)
		w.optStr("model", m.Model)
		if m.Usage != nil {
			// Written by encoding/json before: as in an envelope.
			w.key("usage")
			in := w.inEnvelope
			w.inEnvelope = true
			m.Usage.write(w)
			w.inEnvelope = in
		}
		w.optStr("stopReason", string(m.StopReason)) // empty while streaming (events)
		w.optStr("errorMessage", m.ErrorMessage)
		w.optStr("responseId", m.ResponseID)
	case RoleToolResult:
		w.str("toolCallId", m.ToolCallID)
		w.str("toolName", m.ToolName)
		w.key("content")
		m.Content.write(w)
		w.optRaw("details", m.Details)
		w.boolean("isError", m.IsError)
	case RoleCustom:
		w.str("customType", m.CustomType)
		w.key("content")
		m.Content.write(w)
		w.boolean("display", m.Display)
		w.optRaw("details", m.Details)
	case RoleBranchSummary:
		w.str("summary", m.Summary)
		w.str("fromId", m.FromID)
	case RoleCompactionSummary:
		w.str("summary", m.Summary)
		w.int("tokensBefore", m.TokensBefore)
	case RoleBashExecution:
		w.str("command", m.Command)
		w.str("output", m.Output)
		if m.ExitCode != nil {
			w.int("exitCode", *m.ExitCode)
		}
		w.boolean("cancelled", m.Cancelled)
		w.boolean("truncated", m.Truncated)
		w.optStr("fullOutputPath", m.FullOutputPath)
		w.optBool("excludeFromContext", m.ExcludeFromContext)
	}
	if m.Timestamp != 0 {
		w.int("timestamp", m.Timestamp)
	}
	w.extra(m.Extra)
	w.end(n)
}

// UnmarshalJSON decodes and validates a message.
func (m *Message) UnmarshalJSON(data []byte) error {
	ix, err := indexObject(data)
	if err != nil {
		return err
	}
	defer ix.release()
	return m.decode(data, path{ix: ix})
}

// decode decodes data, a span of valid JSON, named p in errors.
func (m *Message) decode(data []byte, p path) error {
	r, err := readValidObject(data, p)
	if err != nil {
		return err
	}
	defer r.release()
	*m = Message{Role: r.name("role", true)}
	content := func(required bool) {
		r.object("content", required, func(b []byte, p path) error { return m.Content.decode(b, p) })
	}
	switch m.Role {
	case RoleUser:
		content(true)
		m.CommandID = r.str("commandId", false)
	case RoleAssistant:
		content(true)
		m.API = r.str("api", false)
		m.Provider = r.str("provider", false)
		m.Model = r.str("model", false)
		r.object("usage", false, func(b []byte, p path) error {
			m.Usage = new(Usage)
			return m.Usage.decode(b, p)
		})
		// Optional here: a message still streaming (in a live event) has
		// none. Entries require it (Entry's decoder checks).
		m.StopReason = StopReason(r.name("stopReason", false))
		if r.err == nil && m.StopReason != "" && !m.StopReason.valid() {
			r.fail("stopReason", "unknown stop reason %q (want stop, length, toolUse, error or aborted)", m.StopReason)
		}
		m.ErrorMessage = r.str("errorMessage", false)
		m.ResponseID = r.str("responseId", false)
	case RoleToolResult:
		m.ToolCallID = r.str("toolCallId", true)
		m.ToolName = r.str("toolName", true)
		content(true)
		m.Details = r.raw("details", false)
		m.IsError = r.boolean("isError", false)
	case RoleCustom:
		m.CustomType = r.str("customType", true)
		content(true)
		m.Display = r.boolean("display", false)
		m.Details = r.raw("details", false)
	case RoleBranchSummary:
		m.Summary = r.str("summary", true)
		m.FromID = r.str("fromId", true)
	case RoleCompactionSummary:
		m.Summary = r.str("summary", true)
		m.TokensBefore = r.int64("tokensBefore", false)
	case RoleBashExecution:
		m.Command = r.str("command", true)
		m.Output = r.str("output", false)
		m.ExitCode = r.intPtr("exitCode")
		m.Cancelled = r.boolean("cancelled", false)
		m.Truncated = r.boolean("truncated", false)
		m.FullOutputPath = r.str("fullOutputPath", false)
		m.ExcludeFromContext = r.boolean("excludeFromContext", false)
	case "":
	default:
		r.fail("role", "unknown message role %q (want user, assistant, toolResult, custom, branchSummary, compactionSummary or bashExecution)", m.Role)
	}
	m.Timestamp = r.int64("timestamp", false)
	if r.err != nil {
		return r.err
	}
	m.Extra = r.rest()
	return nil
}
