package events

// The strict decoders as they were before the span scanner (commit 9031e0d),
// kept verbatim but renamed: the oracle that differential_test.go compares
// today's decoders with. Do not change this code; it is the old behaviour.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// oldObjReader takes the fields of one JSON object out one by one; what is left
// at the end is the object's Extra. The first problem is kept in err, named
// with path.
type oldObjReader struct {
	m    map[string]json.RawMessage
	path string
	err  error
}

func oldNewObjReader(data []byte, path string) (*oldObjReader, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, &FieldError{Field: path, Problem: "must be a JSON object: " + oldDescribeJSONErr(err, data)}
	}
	return &oldObjReader{m: m, path: path}, nil
}

func oldDescribeJSONErr(err error, data []byte) string {
	if err == nil {
		return "got " + oldJSONKind(data)
	}
	return err.Error()
}

func oldJSONKind(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func (r *oldObjReader) field(k string) string {
	if r.path == "" {
		return k
	}
	return r.path + "." + k
}

func (r *oldObjReader) fail(k, format string, args ...any) {
	if r.err == nil {
		r.err = fieldErr(r.field(k), format, args...)
	}
}

func (r *oldObjReader) take(k string) (json.RawMessage, bool) {
	v, ok := r.m[k]
	if ok {
		delete(r.m, k)
	}
	return v, ok
}

func oldIsNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// str reads a string field; required means absent or null is an error.
func (r *oldObjReader) str(k string, required bool) string {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return ""
	}
	if s, ok := oldPlainString(v); ok {
		return s
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		r.fail(k, "must be a string, got %s", oldJSONKind(v))
	}
	return s
}

// oldPlainString decodes a JSON string of printable ASCII with no escapes, the
// common case, without encoding/json; ok is false for anything else.
func oldPlainString(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return "", false
		}
	}
	return string(inner), true
}

// nullableStr reads a field that must be present and is a string or null.
func (r *oldObjReader) nullableStr(k string) *string {
	v, ok := r.take(k)
	if !ok {
		r.fail(k, "is required (null is allowed)")
		return nil
	}
	if oldIsNull(v) {
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		r.fail(k, "must be a string or null, got %s", oldJSONKind(v))
		return nil
	}
	return &s
}

func (r *oldObjReader) boolean(k string, required bool) bool {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return false
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		r.fail(k, "must be a boolean, got %s", oldJSONKind(v))
	}
	return b
}

func (r *oldObjReader) int64(k string, required bool) int64 {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		// Accept integral floats such as 1.7e12 written by JavaScript.
		var f float64
		if json.Unmarshal(v, &f) != nil || f != float64(int64(f)) {
			r.fail(k, "must be an integer, got %s", string(v))
			return 0
		}
		n = int64(f)
	}
	return n
}

func (r *oldObjReader) intPtr(k string) *int64 {
	v, ok := r.m[k]
	if !ok || oldIsNull(v) {
		delete(r.m, k)
		return nil
	}
	n := r.int64(k, false)
	return &n
}

func (r *oldObjReader) strings(k string, required bool) []string {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return nil
	}
	var s []string
	if err := json.Unmarshal(v, &s); err != nil {
		r.fail(k, "must be an array of strings, got %s", oldJSONKind(v))
	}
	if s == nil {
		s = []string{}
	}
	return s
}

// raw reads any JSON value, compacted; required means it must be present and
// not null.
func (r *oldObjReader) raw(k string, required bool) json.RawMessage {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return nil
	}
	return oldCompact(v)
}

// object reads a field that must hold a JSON object and decodes it with dec.
func (r *oldObjReader) object(k string, required bool, dec func([]byte, string) error) bool {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return false
	}
	if err := dec(v, r.field(k)); err != nil && r.err == nil {
		r.err = err
	}
	return true
}

// rest returns the fields nobody took, compacted; nil if none.
func (r *oldObjReader) rest() Extra {
	if len(r.m) == 0 {
		return nil
	}
	x := make(Extra, len(r.m))
	for k, v := range r.m {
		x[k] = oldCompact(v)
	}
	return x
}

func oldCompact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return slices.Clone(v)
	}
	return b.Bytes()
}

// oldJSONNames returns the JSON member names of struct type t's fields.
func oldJSONNames(t reflect.Type) map[string]bool {
	if v, ok := oldJSONNamesCache.Load(t); ok {
		return v.(map[string]bool)
	}
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
	oldJSONNamesCache.Store(t, names)
	return names
}

// decodeKnown decodes into v, a pointer to a struct with json tags, the members
// of r whose keys are exactly the JSON names of v's fields, and takes them out
// of r. encoding/json alone would also match keys that differ in case, so an
// unknown member "ID" could overwrite "id".
func (r *oldObjReader) decodeKnown(v any) error {
	known := oldJSONNames(reflect.TypeOf(v).Elem())
	sub := make(map[string]json.RawMessage, len(known))
	for k, raw := range r.m {
		if known[k] {
			sub[k] = raw
			delete(r.m, k)
		}
	}
	data, err := json.Marshal(sub)
	if err != nil {
		return fieldErr(r.path, "invalid JSON: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return prefixed(r.path, oldDescribeDecodeErr(err))
	}
	return nil
}

// message reads a field holding one message; absent or null gives nil.
func (r *oldObjReader) message(k string, required bool) *Message {
	var m *Message
	r.object(k, required, func(b []byte, p string) error {
		m = new(Message)
		return oldDecodeMessage(m, b, p)
	})
	return m
}

// messages reads a field holding an array of messages; absent or null gives nil.
func (r *oldObjReader) messages(k string) []Message {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		r.fail(k, "must be an array of messages, got %s", oldJSONKind(v))
		return nil
	}
	msgs := make([]Message, len(raws))
	for i, raw := range raws {
		if err := oldDecodeMessage(&msgs[i], raw, r.field(k)+"["+strconv.Itoa(i)+"]"); err != nil {
			if r.err == nil {
				r.err = err
			}
			return nil
		}
	}
	return msgs
}

// blocks reads a field holding an array of content blocks.
func (r *oldObjReader) blocks(k string, required bool) []Block {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		r.fail(k, "must be an array of content blocks, got %s", oldJSONKind(v))
		return nil
	}
	blocks := make([]Block, len(raws))
	for i, raw := range raws {
		if err := oldDecodeBlock(&blocks[i], raw, r.field(k)+"["+strconv.Itoa(i)+"]"); err != nil {
			if r.err == nil {
				r.err = err
			}
			return nil
		}
	}
	return blocks
}

// float reads an optional number field.
func (r *oldObjReader) float(k string) float64 {
	v, ok := r.take(k)
	if !ok || oldIsNull(v) {
		return 0
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		r.fail(k, "must be a number, got %s", oldJSONKind(v))
	}
	return f
}

// oldFormatExtra and parseExtra keep an Extra as a JSON object in a string, for
// types that must stay comparable with ==.
func oldFormatExtra(x Extra) string {
	if len(x) == 0 {
		return ""
	}
	w := newObjWriter()
	w.extra(x)
	b, _ := w.bytes()
	return string(b)
}

// oldDecodeEntry decodes and validates one entry.
func oldDecodeEntry(data []byte) (Entry, error) {
	var e Entry
	err := oldDecodeEntryInto(&e, data)
	return e, err
}

func oldDecodeEntryInto(e *Entry, data []byte) error {
	r, err := oldNewObjReader(data, "")
	if err != nil {
		return err
	}
	*e = Entry{}
	e.V = int(r.int64("v", false))
	if r.err == nil && e.V != 0 && e.V != SchemaVersion {
		r.fail("v", "unsupported schema version %d (this build reads %d)", e.V, SchemaVersion)
	}
	e.Type = r.str("type", true)
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
		if _, err := time.Parse(time.RFC3339Nano, e.Timestamp); err != nil {
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
		r.object("labels", false, func(b []byte, p string) error {
			if err := json.Unmarshal(b, &e.Labels); err != nil {
				return fieldErr(p, "must be an object of strings")
			}
			return nil
		})
		e.Tenant = r.str("tenant", false)
	case EntryMessage:
		r.object("message", true, func(b []byte, p string) error {
			e.Message = new(Message)
			if err := oldDecodeMessage(e.Message, b, p); err != nil {
				return err
			}
			if e.Message.Role == RoleAssistant && e.Message.StopReason == "" {
				return fieldErr(p+".stopReason", "is required")
			}
			return nil
		})
		r.object("retry", false, func(b []byte, p string) error {
			var v struct {
				Attempt *int   `json:"attempt"`
				DelayMs int64  `json:"delayMs"`
				Code    string `json:"code"`
			}
			if err := json.Unmarshal(b, &v); err != nil {
				return fieldErr(p, "must be an object {attempt, delayMs, code}")
			}
			if v.Attempt == nil || *v.Attempt < 1 {
				return fieldErr(p+".attempt", "is required (1 or more)")
			}
			if v.Code == "" {
				return fieldErr(p+".code", "is required")
			}
			e.Retry = &RetryMark{Attempt: *v.Attempt, DelayMs: v.DelayMs, Code: v.Code}
			if e.Message == nil || e.Message.StopReason != StopError {
				return fieldErr(p, "marks only an assistant message that stopped with an error")
			}
			return nil
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
		r.object("content", true, func(b []byte, p string) error { return oldDecodeContent(&e.Content, b, p) })
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

func oldDecodeMessage(m *Message, data []byte, path string) error {
	r, err := oldNewObjReader(data, path)
	if err != nil {
		return err
	}
	*m = Message{Role: r.str("role", true)}
	content := func(required bool) {
		r.object("content", required, func(b []byte, p string) error { return oldDecodeContent(&m.Content, b, p) })
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
		r.object("usage", false, func(b []byte, p string) error {
			m.Usage = new(Usage)
			return oldDecodeUsage(m.Usage, b, p)
		})
		// Optional here: a message still streaming (in a live event) has
		// none. Entries require it (Entry's decoder checks).
		m.StopReason = StopReason(r.str("stopReason", false))
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

func oldDecodeBlock(b *Block, data []byte, path string) error {
	r, err := oldNewObjReader(data, path)
	if err != nil {
		return err
	}
	*b = Block{Type: r.str("type", true)}
	switch b.Type {
	case BlockText:
		b.Text = r.str("text", true)
		b.TextSignature = r.str("textSignature", false)
	case BlockThinking:
		b.Thinking = r.str("thinking", true)
		b.ThinkingSignature = r.str("thinkingSignature", false)
		b.Redacted = r.boolean("redacted", false)
	case BlockImage:
		b.Data = r.str("data", false)
		b.MimeType = r.str("mimeType", true)
		b.Blob = r.str("blob", false)
		if r.err == nil && b.Data == "" && b.Blob == "" {
			r.fail("data", "is required (an image needs data or a blob reference)")
		}
	case BlockToolCall:
		b.ID = r.str("id", true)
		b.Name = r.str("name", true)
		b.Arguments = r.raw("arguments", true)
		if r.err == nil && (len(b.Arguments) == 0 || b.Arguments[0] != '{') {
			r.fail("arguments", "must be a JSON object")
		}
		b.ThoughtSignature = r.str("thoughtSignature", false)
	case "":
	default:
		r.fail("type", "unknown content block type %q (want text, image, thinking or toolCall)", b.Type)
	}
	if r.err != nil {
		return r.err
	}
	b.Extra = r.rest()
	return nil
}

func oldDecodeContent(c *Content, data []byte, path string) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fieldErr(path, "invalid string: %v", err)
		}
		*c = Content{Blocks: []Block{TextBlock(s)}, String: true}
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return fieldErr(path, "must be a string or an array of content blocks, got %s", oldJSONKind(data))
	}
	blocks := make([]Block, len(raws))
	for i, raw := range raws {
		if err := oldDecodeBlock(&blocks[i], raw, path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	*c = Content{Blocks: blocks}
	return nil
}

func oldDecodeUsage(u *Usage, data []byte, path string) error {
	r, err := oldNewObjReader(data, path)
	if err != nil {
		return err
	}
	*u = Usage{
		Input:       r.int64("input", false),
		Output:      r.int64("output", false),
		CacheRead:   r.int64("cacheRead", false),
		CacheWrite:  r.int64("cacheWrite", false),
		TotalTokens: r.int64("totalTokens", false),
	}
	r.object("cost", false, func(b []byte, p string) error { return oldDecodeCost(&u.Cost, b, p) })
	if r.err != nil {
		return r.err
	}
	u.extra = oldFormatExtra(r.rest())
	return nil
}

func oldDecodeCost(c *Cost, data []byte, path string) error {
	r, err := oldNewObjReader(data, path)
	if err != nil {
		return err
	}
	*c = Cost{
		Input:      r.float("input"),
		Output:     r.float("output"),
		CacheRead:  r.float("cacheRead"),
		CacheWrite: r.float("cacheWrite"),
		Total:      r.float("total"),
	}
	if r.err != nil {
		return r.err
	}
	c.extra = oldFormatExtra(r.rest())
	return nil
}

// oldDecodeCommand decodes and validates a command. An absent "v" means the
// current schema version.
func oldDecodeCommand(data []byte) (Command, error) {
	r, err := oldNewObjReader(data, "")
	if err != nil {
		return Command{}, err
	}
	type plain Command
	var c plain
	_, entryIDPresent := r.m["entryId"]
	if err := r.decodeKnown(&c); err != nil {
		return Command{}, err
	}
	cmd := Command(c)
	cmd.Extra = r.rest()
	if cmd.V == 0 {
		cmd.V = SchemaVersion
	}
	if err := cmd.validate(entryIDPresent); err != nil {
		return Command{}, err
	}
	return cmd, nil
}

func oldDescribeDecodeErr(err error) error {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		return fieldErr(te.Field, "must be %s, got %s", oldJSONTypeName(te.Type.Kind().String()), te.Value)
	}
	return fieldErr("", "invalid JSON: %v", err)
}

func oldJSONTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "a string or null"
	case "int", "int8", "int16", "int32", "int64":
		return "an integer"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "a non-negative integer"
	default:
		return "a number"
	}
}

// oldDecodeEvent decodes and validates an event.
func oldDecodeEvent(data []byte) (Event, error) {
	var ev Event
	r, err := oldNewObjReader(data, "")
	if err != nil {
		return ev, err
	}
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

// oldDecodeToolCall decodes and validates a tool call request.
func oldDecodeToolCall(data []byte) (ToolCall, error) {
	var c ToolCall
	if err := oldDecodeStrict(data, &c, &c.V); err != nil {
		return ToolCall{}, err
	}
	if err := validateID("sessionId", "session id", c.SessionID); err != nil {
		return ToolCall{}, err
	}
	if c.ToolCallID == "" {
		return ToolCall{}, required("toolCallId")
	}
	if err := ValidateToolName("name", c.Name); err != nil {
		return ToolCall{}, err
	}
	if len(c.Arguments) == 0 || c.Arguments[0] != '{' {
		return ToolCall{}, fieldErr("arguments", "must be a JSON object")
	}
	if c.TimeoutMs < 0 {
		return ToolCall{}, fieldErr("timeoutMs", "must not be negative")
	}
	return c, nil
}

// oldDecodeToolResult decodes and validates a tool result.
func oldDecodeToolResult(data []byte) (ToolResult, error) {
	var r ToolResult
	obj, err := oldNewObjReader(data, "")
	if err != nil {
		return ToolResult{}, err
	}
	r.Content = obj.blocks("content", true)
	if obj.err != nil {
		return ToolResult{}, obj.err
	}
	if err := obj.decodeKnown(&r); err != nil {
		return ToolResult{}, err
	}
	if err := checkVersion(&r.V); err != nil {
		return ToolResult{}, err
	}
	if r.Kind != ResultKindTool {
		return ToolResult{}, fieldErr("kind", "must be %q, got %q", ResultKindTool, r.Kind)
	}
	if err := validateID("sessionId", "session id", r.SessionID); err != nil {
		return ToolResult{}, err
	}
	if r.ToolCallID == "" {
		return ToolResult{}, required("toolCallId")
	}
	if r.ToolName == "" {
		return ToolResult{}, required("toolName")
	}
	if r.Content == nil {
		return ToolResult{}, required("content")
	}
	return r, nil
}

// oldDecodeStrict decodes a Cairn-only envelope: a JSON object, types checked,
// schema version current (absent means current). Members that are not v's
// fields are ignored.
func oldDecodeStrict(data []byte, v any, version *int) error {
	r, err := oldNewObjReader(data, "")
	if err != nil {
		return err
	}
	if err := r.decodeKnown(v); err != nil {
		return err
	}
	return checkVersion(version)
}

// oldReadPiFile reads a pi coding agent session file (JSON Lines) of format
// version 1, 2 or 3 and returns its header (the `session` entry) and its
// other entries in file order, migrated to version 3 the way pi migrates
// them:
//
//   - version 1 files (no "version" in the header) are linear and their
//     entries have no ids: every entry gets the id DeriveID("pi-v1",
//     sessionID, position), position being its 0-based index among the
//     file's entries with the header at 0, and the previous entry as parent
//     (the first entry is a root); a compaction's "firstKeptEntryIndex"
//     (that same position) becomes "firstKeptEntryId". The ids are
//     deterministic, so converting a file twice gives the same result.
//   - up to version 2, a message with role "hookMessage" becomes role
//     "custom".
//   - the header's version becomes 3.
//
// Blank lines are skipped. Anything else is decoded strictly (see
// [oldDecodeEntry]) and the tree is checked (see [CheckTree]); the first problem
// is returned as a [*LineError] with the line number and the field.
// Fields Cairn does not model are kept in each entry's Extra.
func oldReadPiFile(r io.Reader) (header Entry, entries []Entry, err error) {
	br := bufio.NewReader(r)
	var (
		lines   []int // line number of each entry, header first
		version int
		pos     int // index of the next entry among the file's entries
		ids     []string
		lineNo  int
	)
	for {
		line, readErr := br.ReadBytes('\n')
		if readErr != nil && readErr != io.EOF {
			return Entry{}, nil, fmt.Errorf("reading pi session file: %w", readErr)
		}
		lineNo++
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			e, err := oldReadPiLine(line, pos, &version, &ids)
			if err != nil {
				return Entry{}, nil, &LineError{Line: lineNo, Err: err}
			}
			if pos == 0 {
				header = e
			} else {
				entries = append(entries, e)
			}
			lines = append(lines, lineNo)
			pos++
		}
		if readErr == io.EOF {
			break
		}
	}
	if pos == 0 {
		return Entry{}, nil, &LineError{Line: 1, Err: fieldErr("type", "the file has no session header (it is empty)")}
	}
	if i, err := checkTree(entries); err != nil {
		return Entry{}, nil, &LineError{Line: lines[i+1], Err: err}
	}
	return header, entries, nil
}

// oldReadPiLine migrates and decodes the entry at position pos of the file. The
// header (pos 0) sets *version; ids collects the ids given to v1 entries.
func oldReadPiLine(line []byte, pos int, version *int, ids *[]string) (Entry, error) {
	if pos > 0 && *version == PiVersion { // nothing to migrate: decode once
		e, err := oldDecodeEntry(line)
		if err == nil && e.Type == EntrySession {
			return Entry{}, errSecondHeader
		}
		return e, err
	}
	obj, err := oldNewObjReader(line, "")
	if err != nil {
		return Entry{}, err
	}
	m := obj.m
	typ := jsonString(m["type"])
	if pos == 0 {
		if typ != EntrySession {
			return Entry{}, fieldErr("type", "the first entry of a pi session file must be the session header, got %s", jsonValueForError(m["type"]))
		}
		v := obj.int64("version", false)
		if obj.err != nil {
			return Entry{}, obj.err
		}
		if v == 0 { // absent or null: version 1, as pi reads it
			v = 1
		}
		if v < 1 || v > PiVersion {
			return Entry{}, fieldErr("version", "unsupported pi session version %d (want 1, 2 or 3)", v)
		}
		*version = int(v)
		m["version"] = json.RawMessage(itoa(PiVersion))
		h, err := oldDecodeEntry(mustMarshal(m))
		if err != nil {
			return Entry{}, err
		}
		*ids = append(*ids, h.ID)
		return h, nil
	}
	if typ == EntrySession {
		return Entry{}, errSecondHeader
	}
	migrated := false
	if *version < 2 {
		if err := migrateV1Entry(m, pos, ids); err != nil {
			return Entry{}, err
		}
		migrated = true
	}
	if *version < 3 && typ == EntryMessage {
		if msg, ok := m["message"]; ok {
			var mm map[string]json.RawMessage
			if json.Unmarshal(msg, &mm) == nil && jsonString(mm["role"]) == "hookMessage" {
				mm["role"] = json.RawMessage(`"` + RoleCustom + `"`)
				m["message"] = mustMarshal(mm)
				migrated = true
			}
		}
	}
	if migrated {
		line = mustMarshal(m)
	}
	return oldDecodeEntry(line)
}

var oldJSONNamesCache sync.Map // reflect.Type -> map[string]bool
