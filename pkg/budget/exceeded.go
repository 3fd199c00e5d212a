package budget

import (
	"errors"
	"fmt"
)

// ErrExceeded matches every [*Exceeded].
var ErrExceeded = errors.New("budget exceeded")

// Limit names, as in the budget's JSON.
const (
	LimitTokens = "tokensPerDay"
	LimitCost   = "costPerDay"
	LimitRuns   = "concurrentRuns"
)

// Exceeded says which limit of which tenant a call or a run would pass.
type Exceeded struct {
	Tenant string
	Limit  string // LimitTokens, LimitCost or LimitRuns
	Max    float64
	// Used is the day's settled use (tokens or USD), or the runs in
	// progress; Reserved what calls in flight have reserved on top.
	Used, Reserved float64
}

func (e *Exceeded) Error() string {
	if e.Limit == LimitRuns {
		return fmt.Sprintf("budget exceeded: %s %g in progress %g of tenant %s", e.Limit, e.Max, e.Used, e.Tenant)
	}
	s := fmt.Sprintf("budget exceeded: %s %s used %s", e.Limit, e.num(e.Max), e.num(e.Used))
	if e.Reserved > 0 {
		s += " reserved " + e.num(e.Reserved)
	}
	return s + " of tenant " + e.Tenant
}

func (e *Exceeded) num(v float64) string {
	if e.Limit == LimitCost {
		return fmt.Sprintf("%.6g", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// Is matches ErrExceeded.
func (e *Exceeded) Is(target error) bool { return target == ErrExceeded }
