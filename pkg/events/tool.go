package events

import (
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// ExecutionMode says whether a tool may run alongside others of its batch.
type ExecutionMode string

const (
	Parallel   ExecutionMode = "parallel"   // the default
	Sequential ExecutionMode = "sequential" // the whole batch runs one at a time
)

// ToolSpec describes a tool to the model and to the platform.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments
	// Mode is parallel unless the tool needs its batch run sequentially.
	Mode ExecutionMode `json:"executionMode,omitempty"`
	// Idempotent tools are run again when a call is redelivered after a
	// crash; others return an "interrupted" error result instead.
	Idempotent bool `json:"idempotent"`
	// TimeoutMs bounds one call; 0 means the runner's default.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// ToolCall is a request to execute one tool call, published on
// cairn.tool.<pool>.<tenant>.<tool>. Its Nats-Msg-Id is toolbus.CallMsgID: the tool
// call id scoped by the session (docs/protocol.md).
type ToolCall struct {
	V          int             `json:"v"`
	Tenant     string          `json:"tenant,omitempty"` // the session's tenant; absent: DefaultTenant
	SessionID  string          `json:"sessionId"`
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Workspace  string          `json:"workspace,omitempty"`  // relative to the runner's workspace root
	Idempotent bool            `json:"idempotent"`           // as the tool declared it
	TimeoutMs  int64           `json:"timeoutMs,omitempty"`  // 0 = runner default
	Owner      string          `json:"owner,omitempty"`      // orchestrator instance that dispatched it
	Dispatched string          `json:"dispatched,omitempty"` // RFC 3339 time of dispatch
}

// ToolResult is the outcome of one tool call, published on
// cairn.result.<tenant>.<sid>. Every call gets exactly one.
type ToolResult struct {
	V          int             `json:"v"`
	Kind       string          `json:"kind"`             // always "tool"; results share a subject with compactions
	Tenant     string          `json:"tenant,omitempty"` // the session's tenant; absent: DefaultTenant
	SessionID  string          `json:"sessionId"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Content    []Block         `json:"content"`
	Details    json.RawMessage `json:"details,omitempty"`
	IsError    bool            `json:"isError"`
	// Terminate asks the loop to stop after this batch (it stops only when
	// every result of the batch asks).
	Terminate bool `json:"terminate,omitempty"`
	// Interrupted marks the error result of a non-idempotent call that was
	// redelivered after it may already have started.
	Interrupted bool   `json:"interrupted,omitempty"`
	DurationMs  int64  `json:"durationMs"`
	Worker      string `json:"worker,omitempty"`
}

// ResultKindTool is ToolResult.Kind.
const ResultKindTool = "tool"

// Encode writes c with the current schema version.
func (c ToolCall) Encode() ([]byte, error) {
	w := jsonx.Writer{B: make([]byte, 0, sizeHint(len(c.Arguments))), InEnvelope: true}
	n := w.Begin()
	w.Int("v", SchemaVersion)
	w.OptStr("tenant", c.Tenant)
	w.Str("sessionId", c.SessionID)
	w.Str("toolCallId", c.ToolCallID)
	w.Str("name", c.Name)
	if c.Arguments == nil {
		w.Key("arguments")
		w.B = append(w.B, "null"...) // as json.RawMessage writes nil
	} else {
		w.Raw("arguments", c.Arguments)
	}
	w.OptStr("workspace", c.Workspace)
	w.Bool("idempotent", c.Idempotent)
	w.OptInt("timeoutMs", c.TimeoutMs)
	w.OptStr("owner", c.Owner)
	w.OptStr("dispatched", c.Dispatched)
	w.End(n)
	return w.Result()
}

// DecodeToolCall decodes and validates a tool call request.
func DecodeToolCall(data []byte) (ToolCall, error) {
	var c ToolCall
	if err := decodeStrict(data, &c, &c.V); err != nil {
		return ToolCall{}, err
	}
	if err := validateTenantField(c.Tenant); err != nil {
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

// Encode writes r with the current schema version.
func (r ToolResult) Encode() ([]byte, error) {
	w := jsonx.Writer{B: make([]byte, 0, sizeHint(blocksSize(r.Content)+len(r.Details))), InEnvelope: true}
	n := w.Begin()
	w.Int("v", SchemaVersion)
	w.Str("kind", ResultKindTool)
	w.OptStr("tenant", r.Tenant)
	w.Str("sessionId", r.SessionID)
	w.Str("toolCallId", r.ToolCallID)
	w.Str("toolName", r.ToolName)
	w.Key("content")
	writeBlocks(&w, r.Content)
	w.OptRaw("details", r.Details)
	w.Bool("isError", r.IsError)
	w.OptBool("terminate", r.Terminate)
	w.OptBool("interrupted", r.Interrupted)
	w.Int("durationMs", r.DurationMs)
	w.OptStr("worker", r.Worker)
	w.End(n)
	return w.Result()
}

// DecodeToolResult decodes and validates a tool result.
func DecodeToolResult(data []byte) (ToolResult, error) {
	var r ToolResult
	obj, err := readObject(data)
	if err != nil {
		return ToolResult{}, err
	}
	defer obj.Release()
	r.Content = readBlocks(&obj, "content", true)
	if obj.Err() != nil {
		return ToolResult{}, fieldError(obj.Err())
	}
	if err := obj.DecodeKnown(&r); err != nil {
		return ToolResult{}, fieldError(err)
	}
	if err := checkVersion(&r.V); err != nil {
		return ToolResult{}, err
	}
	if r.Kind != ResultKindTool {
		return ToolResult{}, fieldErr("kind", "must be %q, got %q", ResultKindTool, r.Kind)
	}
	if err := validateTenantField(r.Tenant); err != nil {
		return ToolResult{}, err
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

// Session is the session c belongs to.
func (c ToolCall) Session() SessionRef { return Ref(c.Tenant, c.SessionID) }

// Session is the session r belongs to.
func (r ToolResult) Session() SessionRef { return Ref(r.Tenant, r.SessionID) }

// validateTenantField checks an optional tenant member of an envelope.
func validateTenantField(t string) error {
	if t == "" {
		return nil
	}
	return ValidateTenant(t)
}

// ResultMessage returns the toolResult message that records r in the log.
func (r ToolResult) ResultMessage(timestamp int64) Message {
	return Message{Role: RoleToolResult, ToolCallID: r.ToolCallID, ToolName: r.ToolName,
		Content: Content{Blocks: r.Content}, Details: r.Details, IsError: r.IsError, Timestamp: timestamp}
}

// decodeStrict decodes a Cairn-only envelope: a JSON object, types checked,
// schema version current (absent means current). Members that are not v's
// fields are ignored.
func decodeStrict(data []byte, v any, version *int) error {
	r, err := readObject(data)
	if err != nil {
		return err
	}
	defer r.Release()
	if err := r.DecodeKnown(v); err != nil {
		return fieldError(err)
	}
	return checkVersion(version)
}

// checkVersion sets an absent schema version to the current one and refuses
// any other.
func checkVersion(version *int) error {
	if *version == 0 {
		*version = SchemaVersion
	}
	if *version != SchemaVersion {
		return fieldErr("v", "unsupported schema version %d (this build reads %d)", *version, SchemaVersion)
	}
	return nil
}
