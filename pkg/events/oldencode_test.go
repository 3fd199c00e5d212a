package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// The encoders as they were before they appended JSON to a byte slice
// themselves (they wrote every member through encoding/json), kept as an
// oracle for the differential tests in encode_differential_test.go. Nested
// values are wrapped in old* types so that encoding/json, through
// reflection, calls the old MarshalJSON methods too.

type (
	oldBlock   Block
	oldContent Content
	oldUsage   Usage
	oldCost    Cost
	oldMessage Message
)

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return slices.Clone(v)
	}
	return b.Bytes()
}

// objWriter writes one JSON object field by field, in call order.
type objWriter struct {
	b   bytes.Buffer
	n   int
	err error
}

func newObjWriter() *objWriter {
	w := &objWriter{}
	w.b.WriteByte('{')
	return w
}

func (w *objWriter) key(k string) {
	if w.n > 0 {
		w.b.WriteByte(',')
	}
	w.n++
	if plainASCII(k, true) {
		w.b.WriteByte('"')
		w.b.WriteString(k)
		w.b.WriteString(`":`)
		return
	}
	kb, _ := json.Marshal(k)
	w.b.Write(kb)
	w.b.WriteByte(':')
}

func plainASCII(s string, html bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
			return false
		}
	}
	return true
}

func (w *objWriter) value(k string, v any) {
	data, err := oldMarshalNoEscape(v)
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("%s: %w", k, err)
		}
		return
	}
	w.key(k)
	w.b.Write(data)
}

func (w *objWriter) rawValue(k string, v json.RawMessage) {
	w.key(k)
	w.b.Write(v)
}

func (w *objWriter) str(k, v string) {
	if plainASCII(v, false) {
		w.key(k)
		w.b.WriteByte('"')
		w.b.WriteString(v)
		w.b.WriteByte('"')
		return
	}
	w.value(k, v)
}
func (w *objWriter) optStr(k, v string) {
	if v != "" {
		w.value(k, v)
	}
}
func (w *objWriter) optBool(k string, v bool) {
	if v {
		w.value(k, v)
	}
}
func (w *objWriter) optRaw(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.rawValue(k, v)
	}
}

func (w *objWriter) nullableStr(k string, v *string) {
	if v == nil {
		w.rawValue(k, json.RawMessage("null"))
		return
	}
	w.value(k, *v)
}

func (w *objWriter) extra(x Extra) {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.rawValue(k, x[k])
	}
}

func (w *objWriter) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	w.b.WriteByte('}')
	return w.b.Bytes(), nil
}

// marshalNoEscape is json.Marshal without HTML escaping (pigen_test.go).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func oldMarshalNoEscape(v any) ([]byte, error) {
	switch x := v.(type) {
	case *oldMessage:
		if x != nil {
			return x.MarshalJSON()
		}
	case oldContent:
		return x.MarshalJSON()
	case []oldBlock:
		if x != nil {
			out := []byte{'['}
			for i := range x {
				if i > 0 {
					out = append(out, ',')
				}
				b, err := x[i].MarshalJSON()
				if err != nil {
					return nil, err
				}
				out = append(out, b...)
			}
			return append(out, ']'), nil
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func oldBlocks(bs []Block) []oldBlock {
	if bs == nil {
		return nil
	}
	out := make([]oldBlock, len(bs))
	for i := range bs {
		out[i] = oldBlock(bs[i])
	}
	return out
}

func oldMessages(ms []Message) []oldMessage {
	if ms == nil {
		return nil
	}
	out := make([]oldMessage, len(ms))
	for i := range ms {
		out[i] = oldMessage(ms[i])
	}
	return out
}

func (b oldBlock) MarshalJSON() ([]byte, error) {
	w := newObjWriter()
	w.str("type", b.Type)
	switch b.Type {
	case BlockText:
		w.str("text", b.Text)
		w.optStr("textSignature", b.TextSignature)
	case BlockThinking:
		w.str("thinking", b.Thinking)
		w.optStr("thinkingSignature", b.ThinkingSignature)
		w.optBool("redacted", b.Redacted)
	case BlockImage:
		w.optStr("data", b.Data)
		w.str("mimeType", b.MimeType)
		w.optStr("blob", b.Blob)
	case BlockToolCall:
		w.str("id", b.ID)
		w.str("name", b.Name)
		args := compact(b.Arguments)
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		w.rawValue("arguments", args)
		w.optStr("thoughtSignature", b.ThoughtSignature)
	}
	w.extra(b.Extra)
	return w.bytes()
}

func (c oldContent) MarshalJSON() ([]byte, error) {
	if c.String && len(c.Blocks) <= 1 {
		s := ""
		if len(c.Blocks) == 1 {
			s = c.Blocks[0].Text
		}
		return oldMarshalNoEscape(s)
	}
	if c.Blocks == nil {
		return []byte("[]"), nil
	}
	return oldMarshalNoEscape(oldBlocks(c.Blocks))
}

func (u oldUsage) MarshalJSON() ([]byte, error) {
	w := newObjWriter()
	w.value("input", u.Input)
	w.value("output", u.Output)
	w.value("cacheRead", u.CacheRead)
	w.value("cacheWrite", u.CacheWrite)
	w.value("totalTokens", u.TotalTokens)
	w.value("cost", oldCost(u.Cost))
	w.extra(parseExtra(u.extra))
	return w.bytes()
}

func (c oldCost) MarshalJSON() ([]byte, error) {
	w := newObjWriter()
	w.value("input", c.Input)
	w.value("output", c.Output)
	w.value("cacheRead", c.CacheRead)
	w.value("cacheWrite", c.CacheWrite)
	w.value("total", c.Total)
	w.extra(parseExtra(c.extra))
	return w.bytes()
}

func (m oldMessage) MarshalJSON() ([]byte, error) {
	w := newObjWriter()
	w.str("role", m.Role)
	switch m.Role {
	case RoleUser:
		w.value("content", oldContent(m.Content))
		w.optStr("commandId", m.CommandID)
	case RoleAssistant:
		w.value("content", oldContent(m.Content))
		w.optStr("api", m.API)
		w.optStr("provider", m.Provider)
		w.optStr("model", m.Model)
		if m.Usage != nil {
			w.value("usage", (*oldUsage)(m.Usage))
		}
		w.optStr("stopReason", string(m.StopReason))
		w.optStr("errorMessage", m.ErrorMessage)
		w.optStr("responseId", m.ResponseID)
	case RoleToolResult:
		w.str("toolCallId", m.ToolCallID)
		w.str("toolName", m.ToolName)
		w.value("content", oldContent(m.Content))
		w.optRaw("details", m.Details)
		w.value("isError", m.IsError)
	case RoleCustom:
		w.str("customType", m.CustomType)
		w.value("content", oldContent(m.Content))
		w.value("display", m.Display)
		w.optRaw("details", m.Details)
	case RoleBranchSummary:
		w.str("summary", m.Summary)
		w.str("fromId", m.FromID)
	case RoleCompactionSummary:
		w.str("summary", m.Summary)
		w.value("tokensBefore", m.TokensBefore)
	case RoleBashExecution:
		w.str("command", m.Command)
		w.str("output", m.Output)
		if m.ExitCode != nil {
			w.value("exitCode", *m.ExitCode)
		}
		w.value("cancelled", m.Cancelled)
		w.value("truncated", m.Truncated)
		w.optStr("fullOutputPath", m.FullOutputPath)
		w.optBool("excludeFromContext", m.ExcludeFromContext)
	}
	if m.Timestamp != 0 {
		w.value("timestamp", m.Timestamp)
	}
	w.extra(m.Extra)
	return w.bytes()
}

func oldEncodeEntry(e Entry) ([]byte, error) {
	w := newObjWriter()
	if e.V != 0 {
		w.value("v", e.V)
	}
	w.str("type", e.Type)
	if e.Type == EntrySession {
		w.value("version", e.Version)
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
			w.value("tools", e.Tools)
		}
		if len(e.Labels) > 0 {
			w.value("labels", e.Labels)
		}
		w.optStr("tenant", e.Tenant)
	case EntryMessage:
		w.value("message", (*oldMessage)(e.Message))
		if r := e.Retry; r != nil {
			type mark struct {
				Attempt int    `json:"attempt"`
				DelayMs int64  `json:"delayMs,omitempty"`
				Code    string `json:"code"`
			}
			w.value("retry", mark{r.Attempt, r.DelayMs, r.Code})
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
		w.value("activeToolNames", names)
	case EntryCompaction:
		w.str("summary", e.Summary)
		w.str("firstKeptEntryId", e.FirstKeptEntryID)
		w.value("tokensBefore", e.TokensBefore)
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
		w.value("content", oldContent(e.Content))
		w.value("display", e.Display)
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
	return w.bytes()
}

func oldEncodeCommand(c Command) ([]byte, error) {
	type plain Command
	data, err := oldMarshalNoEscape(plain(c))
	if err != nil {
		return nil, err
	}
	if c.Type == CmdNavigate && c.EntryID == nil {
		data = append(data[:len(data)-1], []byte(`,"entryId":null}`)...)
	}
	if c.Tools != nil && len(c.Tools) == 0 {
		data = append(data[:len(data)-1], []byte(`,"tools":[]}`)...)
	}
	return oldAppendExtra(data, c.Extra), nil
}

func oldAppendExtra(obj []byte, x Extra) []byte {
	if len(x) == 0 {
		return obj
	}
	w := newObjWriter()
	w.extra(x)
	more, _ := w.bytes()
	out := append(obj[:len(obj)-1:len(obj)-1], ',')
	return append(out, more[1:]...)
}

// oldEvent is Event with its messages in their old form.
type oldEvent struct {
	V           int             `json:"v"`
	Type        string          `json:"type"`
	SessionID   string          `json:"sessionId,omitempty"`
	Seq         uint64          `json:"seq,omitempty"`
	Time        string          `json:"time,omitempty"`
	Message     *oldMessage     `json:"message,omitempty"`
	Delta       *Delta          `json:"delta,omitempty"`
	ToolResults []oldMessage    `json:"toolResults,omitempty"`
	Messages    []oldMessage    `json:"messages,omitempty"`
	ToolCallID  string          `json:"toolCallId,omitempty"`
	ToolName    string          `json:"toolName,omitempty"`
	Args        json.RawMessage `json:"args,omitempty"`
	Partial     *oldMessage     `json:"partial,omitempty"`
	Result      *oldMessage     `json:"result,omitempty"`
	IsError     bool            `json:"isError,omitempty"`
	Queue       *Queue          `json:"queue,omitempty"`
	Retry       *Retry          `json:"retry,omitempty"`
	Compaction  *Compaction     `json:"compaction,omitempty"`
	Hook        string          `json:"hook,omitempty"`
	CommandID   string          `json:"commandId,omitempty"`
	Error       string          `json:"error,omitempty"`
}

func oldEncodeEvent(ev Event) ([]byte, error) {
	return oldMarshalNoEscape(oldEvent{
		V: SchemaVersion, Type: ev.Type, SessionID: ev.SessionID, Seq: ev.Seq, Time: ev.Time,
		Message: (*oldMessage)(ev.Message), Delta: ev.Delta,
		ToolResults: oldMessages(ev.ToolResults), Messages: oldMessages(ev.Messages),
		ToolCallID: ev.ToolCallID, ToolName: ev.ToolName, Args: ev.Args,
		Partial: (*oldMessage)(ev.Partial), Result: (*oldMessage)(ev.Result), IsError: ev.IsError,
		Queue: ev.Queue, Retry: ev.Retry, Compaction: ev.Compaction,
		Hook: ev.Hook, CommandID: ev.CommandID, Error: ev.Error,
	})
}

func oldEncodeToolCall(c ToolCall) ([]byte, error) {
	c.V = SchemaVersion
	return oldMarshalNoEscape(c)
}

// oldToolResult is ToolResult with its blocks in their old form.
type oldToolResult struct {
	V           int             `json:"v"`
	Kind        string          `json:"kind"`
	SessionID   string          `json:"sessionId"`
	ToolCallID  string          `json:"toolCallId"`
	ToolName    string          `json:"toolName"`
	Content     []oldBlock      `json:"content"`
	Details     json.RawMessage `json:"details,omitempty"`
	IsError     bool            `json:"isError"`
	Terminate   bool            `json:"terminate,omitempty"`
	Interrupted bool            `json:"interrupted,omitempty"`
	DurationMs  int64           `json:"durationMs"`
	Worker      string          `json:"worker,omitempty"`
}

func oldEncodeToolResult(r ToolResult) ([]byte, error) {
	content := oldBlocks(r.Content)
	if content == nil {
		content = []oldBlock{}
	}
	return oldMarshalNoEscape(oldToolResult{
		V: SchemaVersion, Kind: ResultKindTool, SessionID: r.SessionID, ToolCallID: r.ToolCallID,
		ToolName: r.ToolName, Content: content, Details: r.Details, IsError: r.IsError,
		Terminate: r.Terminate, Interrupted: r.Interrupted, DurationMs: r.DurationMs, Worker: r.Worker,
	})
}
