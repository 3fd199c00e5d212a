package events

import (
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
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
	w := jsonx.Writer{B: make([]byte, 0, sizeHint(m.size())), InEnvelope: true}
	m.write(&w)
	return w.Result()
}

// write writes the canonical form of m.
func (m *Message) write(w *jsonx.Writer) {
	n := w.Begin()
	w.Str("role", m.Role)
	switch m.Role {
	case RoleUser:
		w.Key("content")
		m.Content.write(w)
		w.OptStr("commandId", m.CommandID)
	case RoleAssistant:
		w.Key("content")
		m.Content.write(w)
		w.OptStr("api", m.API)
		w.OptStr("provider", m.Provider)
		w.OptStr("model", m.Model)
		if m.Usage != nil {
			// Written by encoding/json before: as in an envelope.
			w.Key("usage")
			in := w.InEnvelope
			w.InEnvelope = true
			m.Usage.write(w)
			w.InEnvelope = in
		}
		w.OptStr("stopReason", string(m.StopReason)) // empty while streaming (events)
		w.OptStr("errorMessage", m.ErrorMessage)
		w.OptStr("responseId", m.ResponseID)
	case RoleToolResult:
		w.Str("toolCallId", m.ToolCallID)
		w.Str("toolName", m.ToolName)
		w.Key("content")
		m.Content.write(w)
		w.OptRaw("details", m.Details)
		w.Bool("isError", m.IsError)
	case RoleCustom:
		w.Str("customType", m.CustomType)
		w.Key("content")
		m.Content.write(w)
		w.Bool("display", m.Display)
		w.OptRaw("details", m.Details)
	case RoleBranchSummary:
		w.Str("summary", m.Summary)
		w.Str("fromId", m.FromID)
	case RoleCompactionSummary:
		w.Str("summary", m.Summary)
		w.Int("tokensBefore", m.TokensBefore)
	case RoleBashExecution:
		w.Str("command", m.Command)
		w.Str("output", m.Output)
		if m.ExitCode != nil {
			w.Int("exitCode", *m.ExitCode)
		}
		w.Bool("cancelled", m.Cancelled)
		w.Bool("truncated", m.Truncated)
		w.OptStr("fullOutputPath", m.FullOutputPath)
		w.OptBool("excludeFromContext", m.ExcludeFromContext)
	}
	if m.Timestamp != 0 {
		w.Int("timestamp", m.Timestamp)
	}
	w.Extra(m.Extra)
	w.End(n)
}

// UnmarshalJSON decodes and validates a message.
func (m *Message) UnmarshalJSON(data []byte) error {
	ix, err := indexObject(data)
	if err != nil {
		return err
	}
	defer ix.Release()
	return m.decode(data, ix.Root())
}

// decode decodes data, a span of valid JSON, named p in errors.
func (m *Message) decode(data []byte, p jsonx.Path) error {
	r, err := readValidObject(data, p)
	if err != nil {
		return err
	}
	defer r.Release()
	*m = Message{Role: r.Name("role", true, names)}
	content := func(required bool) {
		r.Object("content", required, func(b []byte, p jsonx.Path) error { return m.Content.decode(b, p) })
	}
	switch m.Role {
	case RoleUser:
		content(true)
		m.CommandID = r.Str("commandId", false)
	case RoleAssistant:
		content(true)
		m.API = r.Str("api", false)
		m.Provider = r.Str("provider", false)
		m.Model = r.Str("model", false)
		r.Object("usage", false, func(b []byte, p jsonx.Path) error {
			m.Usage = new(Usage)
			return m.Usage.decode(b, p)
		})
		// Optional here: a message still streaming (in a live event) has
		// none. Entries require it (Entry's decoder checks).
		m.StopReason = StopReason(r.Name("stopReason", false, names))
		if r.Err() == nil && m.StopReason != "" && !m.StopReason.valid() {
			r.Fail("stopReason", "unknown stop reason %q (want stop, length, toolUse, error or aborted)", m.StopReason)
		}
		m.ErrorMessage = r.Str("errorMessage", false)
		m.ResponseID = r.Str("responseId", false)
	case RoleToolResult:
		m.ToolCallID = r.Str("toolCallId", true)
		m.ToolName = r.Str("toolName", true)
		content(true)
		m.Details = r.Raw("details", false)
		m.IsError = r.Bool("isError", false)
	case RoleCustom:
		m.CustomType = r.Str("customType", true)
		content(true)
		m.Display = r.Bool("display", false)
		m.Details = r.Raw("details", false)
	case RoleBranchSummary:
		m.Summary = r.Str("summary", true)
		m.FromID = r.Str("fromId", true)
	case RoleCompactionSummary:
		m.Summary = r.Str("summary", true)
		m.TokensBefore = r.Int64("tokensBefore", false)
	case RoleBashExecution:
		m.Command = r.Str("command", true)
		m.Output = r.Str("output", false)
		m.ExitCode = r.IntPtr("exitCode")
		m.Cancelled = r.Bool("cancelled", false)
		m.Truncated = r.Bool("truncated", false)
		m.FullOutputPath = r.Str("fullOutputPath", false)
		m.ExcludeFromContext = r.Bool("excludeFromContext", false)
	case "":
	default:
		r.Fail("role", "unknown message role %q (want user, assistant, toolResult, custom, branchSummary, compactionSummary or bashExecution)", m.Role)
	}
	m.Timestamp = r.Int64("timestamp", false)
	if r.Err() != nil {
		return fieldError(r.Err())
	}
	m.Extra = r.Rest()
	return nil
}
