package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Script is a parsed script file.
type Script struct {
	Defaults Defaults `json:"defaults"`
	Rules    []Rule   `json:"rules"`
}

// Defaults apply to every reply that does not set its own.
type Defaults struct {
	DelayMs         int64   `json:"delayMs"`
	TokensPerSecond float64 `json:"tokensPerSecond"`
	Usage           *Usage  `json:"usage,omitempty"`
	ContextWindow   int64   `json:"contextWindow"` // 0 = 200000
	MaxOutput       int64   `json:"maxOutput"`     // 0 = 32000
}

// Rule gives Reply when Match fits, at most Times times (0 = always).
type Rule struct {
	Match Match `json:"match"`
	Times int   `json:"times"`
	Reply Reply `json:"reply"`
}

// Match tests the last message of the context; empty fields match anything.
type Match struct {
	LastRole string `json:"lastRole"` // user | toolResult | assistant
	Contains string `json:"contains"` // substring of the message's text
	Tool     string `json:"tool"`     // tool name of a tool result
}

// Reply is what the scripted model answers.
type Reply struct {
	Text            string     `json:"text"`
	Thinking        string     `json:"thinking"`
	ToolCalls       []ToolCall `json:"toolCalls"`
	StopReason      string     `json:"stopReason"` // default toolUse with tool calls, else stop
	Error           *Error     `json:"error"`
	DelayMs         *int64     `json:"delayMs"`
	TokensPerSecond *float64   `json:"tokensPerSecond"`
	Usage           *Usage     `json:"usage"`
}

// ToolCall is one tool call of a reply.
type ToolCall struct {
	ID        string          `json:"id"` // default: generated
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // default {}

	text string // Arguments as a string, set by Parse
}

// Error makes the call fail like a provider answering with an HTTP error.
type Error struct {
	Status       int    `json:"status"`
	Message      string `json:"message"`
	RetryAfterMs int64  `json:"retryAfterMs"` // the provider's retry-after, if any
}

// Usage is token counts, or "estimate": input = context characters / 4,
// output = reply characters / 4.
type Usage struct {
	Estimate   bool
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// UnmarshalJSON accepts an object of counts or the string "estimate".
func (u *Usage) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil || s != "estimate" {
			return fmt.Errorf(`want an object of token counts or "estimate", got %s`, data)
		}
		*u = Usage{Estimate: true}
		return nil
	}
	type counts Usage
	var c counts
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf(`want an object of token counts (input, output, cacheRead, cacheWrite) or "estimate": %v`, err)
	}
	*u = Usage(c)
	return nil
}

// ErrInvalidScript matches every error of Parse and Load.
var ErrInvalidScript = errors.New("invalid script")

// FieldError names the field of a script that is wrong.
type FieldError struct {
	Field   string // e.g. rules[1].reply.error.status
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return "script: " + e.Problem
	}
	return "script: " + e.Field + ": " + e.Problem
}

// Is matches ErrInvalidScript.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidScript }

// Load reads and parses the script at path.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse decodes and validates a script. Unknown fields are refused, so a
// typo never silently does nothing.
func Parse(data []byte) (*Script, error) {
	var raw struct {
		Defaults json.RawMessage   `json:"defaults"`
		Rules    []json.RawMessage `json:"rules"`
	}
	if err := strictDecode(data, &raw, ""); err != nil {
		return nil, err
	}
	s := &Script{}
	if len(raw.Defaults) > 0 {
		if err := strictDecode(raw.Defaults, &s.Defaults, "defaults"); err != nil {
			return nil, err
		}
	}
	if len(raw.Rules) == 0 {
		return nil, &FieldError{Field: "rules", Problem: "is required: a script needs at least one rule"}
	}
	s.Rules = make([]Rule, len(raw.Rules))
	for i, r := range raw.Rules {
		if err := strictDecode(r, &s.Rules[i], fmt.Sprintf("rules[%d]", i)); err != nil {
			return nil, err
		}
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func strictDecode(data []byte, v any, path string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			return &FieldError{Field: path, Problem: "unexpected data after the JSON value"}
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &FieldError{Field: join(path, te.Field), Problem: fmt.Sprintf("want %s, got %s", te.Type, te.Value)}
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &FieldError{Field: path, Problem: "unknown field " + msg}
	}
	var me *json.MarshalerError
	if errors.As(err, &me) {
		return &FieldError{Field: path, Problem: me.Error()}
	}
	// errors from nested UnmarshalJSON (usage) and syntax errors
	return &FieldError{Field: path, Problem: strings.TrimPrefix(err.Error(), "json: ")}
}

func join(path, field string) string {
	switch {
	case path == "":
		return field
	case field == "":
		return path
	}
	return path + "." + field
}

func (s *Script) validate() error {
	d := &s.Defaults
	if d.DelayMs < 0 {
		return &FieldError{Field: "defaults.delayMs", Problem: fmt.Sprintf("must not be negative, got %d", d.DelayMs)}
	}
	if d.TokensPerSecond < 0 {
		return &FieldError{Field: "defaults.tokensPerSecond", Problem: fmt.Sprintf("must not be negative, got %g", d.TokensPerSecond)}
	}
	if d.ContextWindow < 0 {
		return &FieldError{Field: "defaults.contextWindow", Problem: fmt.Sprintf("must not be negative, got %d", d.ContextWindow)}
	}
	if d.MaxOutput < 0 {
		return &FieldError{Field: "defaults.maxOutput", Problem: fmt.Sprintf("must not be negative, got %d", d.MaxOutput)}
	}
	if err := validUsage("defaults.usage", d.Usage); err != nil {
		return err
	}
	for i := range s.Rules {
		if err := s.Rules[i].validate(fmt.Sprintf("rules[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rule) validate(p string) error {
	switch r.Match.LastRole {
	case "", events.RoleUser, events.RoleToolResult, events.RoleAssistant:
	default:
		return &FieldError{Field: p + ".match.lastRole", Problem: fmt.Sprintf("unknown role %q (want user, toolResult or assistant)", r.Match.LastRole)}
	}
	if r.Match.Tool != "" && r.Match.LastRole != "" && r.Match.LastRole != events.RoleToolResult {
		return &FieldError{Field: p + ".match.tool", Problem: fmt.Sprintf("only matches tool results, but lastRole is %q", r.Match.LastRole)}
	}
	if r.Times < 0 {
		return &FieldError{Field: p + ".times", Problem: fmt.Sprintf("must not be negative, got %d", r.Times)}
	}
	rp := &r.Reply
	q := p + ".reply"
	switch events.StopReason(rp.StopReason) {
	case "", events.StopEnd, events.StopLength, events.StopToolUse, events.StopError, events.StopAborted:
	default:
		return &FieldError{Field: q + ".stopReason", Problem: fmt.Sprintf("unknown stop reason %q (want stop, length, toolUse, error or aborted)", rp.StopReason)}
	}
	if rp.Error != nil {
		if rp.Error.Status < 400 || rp.Error.Status > 599 {
			return &FieldError{Field: q + ".error.status", Problem: fmt.Sprintf("must be an HTTP error status (400-599), got %d", rp.Error.Status)}
		}
		if rp.Error.RetryAfterMs < 0 {
			return &FieldError{Field: q + ".error.retryAfterMs", Problem: "must not be negative"}
		}
		if rp.Text != "" || rp.Thinking != "" || len(rp.ToolCalls) > 0 {
			return &FieldError{Field: q + ".error", Problem: "a reply with an error cannot also have text, thinking or toolCalls"}
		}
	}
	if rp.DelayMs != nil && *rp.DelayMs < 0 {
		return &FieldError{Field: q + ".delayMs", Problem: fmt.Sprintf("must not be negative, got %d", *rp.DelayMs)}
	}
	if rp.TokensPerSecond != nil && *rp.TokensPerSecond < 0 {
		return &FieldError{Field: q + ".tokensPerSecond", Problem: fmt.Sprintf("must not be negative, got %g", *rp.TokensPerSecond)}
	}
	if err := validUsage(q+".usage", rp.Usage); err != nil {
		return err
	}
	for j, tc := range rp.ToolCalls {
		f := fmt.Sprintf("%s.toolCalls[%d]", q, j)
		if err := events.ValidateToolName(f+".name", tc.Name); err != nil {
			return &FieldError{Field: f + ".name", Problem: fmt.Sprintf("invalid tool name %q: %v", tc.Name, err)}
		}
		if a := bytes.TrimSpace(tc.Arguments); len(a) > 0 && a[0] != '{' {
			return &FieldError{Field: f + ".arguments", Problem: "must be a JSON object"}
		}
		if len(tc.Arguments) == 0 {
			rp.ToolCalls[j].Arguments = json.RawMessage("{}")
		}
		rp.ToolCalls[j].text = string(rp.ToolCalls[j].Arguments)
	}
	return nil
}

func validUsage(field string, u *Usage) error {
	if u == nil || u.Estimate {
		return nil
	}
	if u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0 {
		return &FieldError{Field: field, Problem: "token counts must not be negative"}
	}
	return nil
}
