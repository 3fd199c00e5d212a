package budget

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
)

// A tenant's sub-agent limits (DESIGN §13, docs/subagents.md) are tenant
// configuration like its budget, kept in the same bucket under
// subagents.<tenant>: how deep sub-agents may nest and how many task
// calls one batch may start. They apply to task calls prepared from the
// next load of the calling session's harness on.

// Default sub-agent limits, when a tenant sets none.
const (
	DefaultMaxDepth  = 3
	DefaultMaxFanOut = 20
	// MaxFanOutLimit bounds what a tenant may set as its fan-out.
	MaxFanOutLimit = 256
)

// Subagents are a tenant's sub-agent limits: MaxDepth is the deepest a
// sub-agent may be (1 = children of top-level sessions only; 0 = no
// sub-agents), MaxFanOut the most task calls one batch may start.
type Subagents struct {
	MaxDepth  int `json:"maxDepth"`
	MaxFanOut int `json:"maxFanOut"`
}

// DefaultSubagents are the limits of a tenant that set none.
var DefaultSubagents = Subagents{MaxDepth: DefaultMaxDepth, MaxFanOut: DefaultMaxFanOut}

// Validate checks the limits; the error names the field.
func (s Subagents) Validate() error {
	if s.MaxDepth < 0 || s.MaxDepth > events.MaxTaskDepth {
		return &events.FieldError{Field: "maxDepth", Problem: fmt.Sprintf("must be 0 to %d, got %d", events.MaxTaskDepth, s.MaxDepth)}
	}
	if s.MaxFanOut < 0 || s.MaxFanOut > MaxFanOutLimit {
		return &events.FieldError{Field: "maxFanOut", Problem: fmt.Sprintf("must be 0 to %d, got %d", MaxFanOutLimit, s.MaxFanOut)}
	}
	return nil
}

// DecodeSubagents decodes and checks limits: both fields are required.
func DecodeSubagents(data []byte) (Subagents, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Subagents{}, &events.FieldError{Problem: "sub-agent limits must be a JSON object {maxDepth, maxFanOut}"}
	}
	var s Subagents
	for k, v := range raw {
		var n int
		if err := json.Unmarshal(v, &n); err != nil {
			return Subagents{}, &events.FieldError{Field: k, Problem: "must be an integer"}
		}
		switch k {
		case "maxDepth":
			s.MaxDepth = n
		case "maxFanOut":
			s.MaxFanOut = n
		default:
			return Subagents{}, &events.FieldError{Field: k, Problem: "unknown field (the limits are maxDepth and maxFanOut)"}
		}
	}
	for _, k := range []string{"maxDepth", "maxFanOut"} {
		if _, ok := raw[k]; !ok {
			return Subagents{}, &events.FieldError{Field: k, Problem: "is required"}
		}
	}
	return s, s.Validate()
}

func subagentsKey(tenant string) string { return "subagents." + tenant }

// Subagents returns tenant's sub-agent limits, DefaultSubagents when none
// is set.
func (l *Ledger) Subagents(ctx context.Context, tenant string) (Subagents, error) {
	data, _, err := l.get(ctx, l.limits, subagentsKey(tenant))
	if err != nil {
		return Subagents{}, err
	}
	if data == nil {
		return DefaultSubagents, nil
	}
	s, err := DecodeSubagents(data)
	if err != nil {
		return Subagents{}, fmt.Errorf("budget: stored sub-agent limits of tenant %s: %w", tenant, err)
	}
	return s, nil
}

// SetSubagents stores tenant's sub-agent limits.
func (l *Ledger) SetSubagents(ctx context.Context, tenant string, s Subagents) error {
	if err := ValidateTenant(tenant); err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return jsretry.Do(ctx, func(ctx context.Context) error {
		_, err := l.limits.Put(ctx, subagentsKey(tenant), data)
		return err
	})
}
