package events

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// Approvals (DESIGN §11). A session's policy is set by create's approvals
// and changed by set_approvals (an approvals_change entry); a call that
// needs an answer gets an approval_requested entry, each answer an
// approval_answered entry, and the results of the batch's other calls wait
// in tool_result_held entries until the last answer, when every result is
// recorded in the model's order (docs/approvals.md).
const (
	// EntryApprovalsChange records a session's new approval policy.
	EntryApprovalsChange = "approvals_change"
	// EntryApprovalRequested parks one tool call until it is answered.
	EntryApprovalRequested = "approval_requested"
	// EntryApprovalAnswered answers one parked call: approve, deny, expire or abort.
	EntryApprovalAnswered = "approval_answered"
	// EntryToolResultHeld keeps the result of a call of a parked batch
	// that ran, until the batch's results are recorded in call order.
	EntryToolResultHeld = "tool_result_held"
)

// Commands of approvals.
const (
	CmdApprove      = "approve"
	CmdDeny         = "deny"
	CmdSetApprovals = "set_approvals"
)

// Live events of approvals: the entry, as an event.
const (
	EvApprovalRequested = "approval_requested"
	EvApprovalAnswered  = "approval_answered"
)

// Policy values: what a policy says of a tool.
const (
	PolicyAllow = "allow" // run the call
	PolicyAsk   = "ask"   // park it until a person answers
)

// Decisions of an approval_answered entry.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	DecisionExpire  = "expire" // expiresAt passed: denied
	DecisionAbort   = "abort"  // an abort denied every pending call
)

// MaxApprovalRules bounds a policy's tool rules.
const MaxApprovalRules = 256

// Approvals is an approval policy: per tool name, or "*" for every tool
// not named, allow or ask; ExpiresAfterMs, when positive, is how long a
// request waits before it is denied as expired (0 = it never expires).
// A tool neither named nor covered by "*" is allowed.
type Approvals struct {
	Tools          map[string]string `json:"tools"`
	ExpiresAfterMs int64             `json:"expiresAfterMs,omitempty"`
}

// Decide returns what the policy says of tool: PolicyAllow or PolicyAsk.
// A nil policy allows everything.
func (a *Approvals) Decide(tool string) string {
	if a == nil {
		return PolicyAllow
	}
	if v, ok := a.Tools[tool]; ok {
		return v
	}
	if v, ok := a.Tools["*"]; ok {
		return v
	}
	return PolicyAllow
}

// ExpiresAt returns the expiry of a request made at now, "" for none.
func (a *Approvals) ExpiresAt(now time.Time) string {
	if a == nil || a.ExpiresAfterMs <= 0 {
		return ""
	}
	return FormatTime(now.Add(time.Duration(a.ExpiresAfterMs) * time.Millisecond))
}

// Validate checks a policy; field names the member it came in.
func (a *Approvals) Validate(field string) error {
	if a == nil {
		return nil
	}
	if len(a.Tools) > MaxApprovalRules {
		return fieldErr(field+".tools", "has %d rules (at most %d)", len(a.Tools), MaxApprovalRules)
	}
	names := make([]string, 0, len(a.Tools))
	for n := range a.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n != "*" {
			if err := ValidateToolName(field+".tools", n); err != nil {
				return err
			}
		}
		switch a.Tools[n] {
		case PolicyAllow, PolicyAsk:
		default:
			return fieldErr(field+".tools."+n, "must be allow or ask, got %q", a.Tools[n])
		}
	}
	if a.ExpiresAfterMs < 0 {
		return fieldErr(field+".expiresAfterMs", "must not be negative, got %d", a.ExpiresAfterMs)
	}
	return nil
}

// MarshalJSON writes the policy with its rules in name order, keys and
// values escaped as every string of the package is (doc.go), whatever
// encoding/json of the Go release would do with a map.
func (a Approvals) MarshalJSON() ([]byte, error) {
	w := jsonx.Writer{B: make([]byte, 0, 32+16*len(a.Tools))}
	n := w.Begin()
	tools := a.Tools
	if tools == nil {
		tools = map[string]string{}
	}
	w.StrMap("tools", tools)
	w.OptInt("expiresAfterMs", a.ExpiresAfterMs)
	w.End(n)
	return w.Result()
}

// DecodeApprovals decodes and validates a policy.
func DecodeApprovals(field string, b []byte) (*Approvals, error) {
	var a Approvals
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fieldErr(field, "must be an object {tools: {name or *: allow|ask}, expiresAfterMs}")
	}
	if err := a.Validate(field); err != nil {
		return nil, err
	}
	return &a, nil
}

// Approval is an approval request or answer as a live event carries it.
type Approval struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	ExpiresAt  string          `json:"expiresAt,omitempty"`
	Decision   string          `json:"decision,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Principal  string          `json:"principal,omitempty"`
	EntryID    string          `json:"entryId,omitempty"`
}

// ApprovalOf returns the approval an approval_requested or
// approval_answered entry records, as its event carries it.
func ApprovalOf(e *Entry) *Approval {
	return &Approval{ToolCallID: e.ToolCallID, ToolName: e.ToolName, Arguments: e.Arguments, ExpiresAt: e.ExpiresAt,
		Decision: e.Decision, Reason: e.Reason, Principal: e.Principal, EntryID: e.ID}
}
