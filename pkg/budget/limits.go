package budget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/cairn-agents/cairn/pkg/events"
)

// DefaultTenant is the tenant of sessions that name none.
const DefaultTenant = events.DefaultTenant

// Code is the refusal code of a command refused over budget.
const Code = "budget_exceeded"

// Limits is a tenant's budget. Zero means no limit.
type Limits struct {
	TokensPerDay   int64   `json:"tokensPerDay"`
	CostPerDay     float64 `json:"costPerDay"` // US dollars
	ConcurrentRuns int64   `json:"concurrentRuns"`
}

// Bounds of the limits: larger values are refused as typing mistakes.
const (
	MaxTokensPerDay   = 1_000_000_000_000 // 10^12
	MaxCostPerDay     = 10_000_000        // USD
	MaxConcurrentRuns = 1_000_000
)

// ValidateTenant reports whether t is a tenant name: the one rule,
// events.ValidateTenant.
func ValidateTenant(t string) error { return events.ValidateTenant(t) }

// TenantOf returns t, or DefaultTenant when t is empty.
func TenantOf(t string) string {
	if t == "" {
		return DefaultTenant
	}
	return t
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// DecodeLimits reads a budget from JSON: an object with the optional
// fields tokensPerDay, costPerDay and concurrentRuns (null or absent: no
// limit). Unknown fields, repeated fields, negative, fractional (tokens,
// runs) or too large values are refused with an error naming the field.
func DecodeLimits(data []byte) (Limits, error) {
	var l Limits
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return l, errors.New("body: a JSON object expected, like {\"tokensPerDay\": 100000}")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return l, errors.New("body: malformed JSON")
		}
		name, _ := tok.(string)
		if seen[name] {
			return l, fmt.Errorf("%s: given twice", name)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return l, fmt.Errorf("%s: malformed JSON value", clip(name))
		}
		switch name {
		case "tokensPerDay":
			l.TokensPerDay, err = intField(name, raw, MaxTokensPerDay)
		case "costPerDay":
			l.CostPerDay, err = costField(name, raw)
		case "concurrentRuns":
			l.ConcurrentRuns, err = intField(name, raw, MaxConcurrentRuns)
		default:
			return l, fmt.Errorf("%q: unknown field (the fields are tokensPerDay, costPerDay, concurrentRuns)", clip(name))
		}
		if err != nil {
			return l, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return l, errors.New("body: malformed JSON")
	}
	if dec.More() || dec.InputOffset() < int64(len(bytes.TrimRight(data, " \t\r\n"))) {
		return l, errors.New("body: one JSON object expected, found more after it")
	}
	return l, nil
}

func intField(name string, raw json.RawMessage, limit int64) (int64, error) {
	s := string(raw)
	if s == "null" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: must be a whole number from 0 to %d, got %s", name, limit, clip(s))
	}
	return v, checkInt(name, v, limit)
}

func checkInt(name string, v, limit int64) error {
	if v < 0 || v > limit {
		return fmt.Errorf("%s: must be from 0 to %d, got %d", name, limit, v)
	}
	return nil
}

func costField(name string, raw json.RawMessage) (float64, error) {
	s := string(raw)
	if s == "null" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || len(s) == 0 || s[0] == '"' {
		return 0, fmt.Errorf("%s: must be a number of US dollars from 0 to %d, got %s", name, MaxCostPerDay, clip(s))
	}
	return v, checkCost(name, v)
}

func checkCost(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxCostPerDay {
		return fmt.Errorf("%s: must be a number of US dollars from 0 to %d, got %v", name, MaxCostPerDay, v)
	}
	return nil
}

// Validate reports the first limit out of bounds.
func (l Limits) Validate() error {
	if err := checkInt("tokensPerDay", l.TokensPerDay, MaxTokensPerDay); err != nil {
		return err
	}
	if err := checkCost("costPerDay", l.CostPerDay); err != nil {
		return err
	}
	return checkInt("concurrentRuns", l.ConcurrentRuns, MaxConcurrentRuns)
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l == Limits{} }
