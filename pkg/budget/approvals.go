package budget

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
)

// A tenant's default approval policy (DESIGN §11, docs/approvals.md) is
// tenant configuration like its budget, kept in the same bucket under
// approvals.<tenant>. A session whose log names no policy of its own uses
// it from its next load on.

func approvalsKey(tenant string) string { return "approvals." + tenant }

// Approvals returns tenant's default approval policy; nil when none is set.
func (l *Ledger) Approvals(ctx context.Context, tenant string) (*events.Approvals, error) {
	data, _, err := l.get(ctx, l.limits, approvalsKey(tenant))
	if err != nil || data == nil {
		return nil, err
	}
	a, err := events.DecodeApprovals("approvals", data)
	if err != nil {
		return nil, fmt.Errorf("budget: stored approval policy of tenant %s: %w", tenant, err)
	}
	return a, nil
}

// SetApprovals stores tenant's default approval policy; nil removes it.
func (l *Ledger) SetApprovals(ctx context.Context, tenant string, a *events.Approvals) error {
	if err := ValidateTenant(tenant); err != nil {
		return err
	}
	if a == nil {
		return jsretry.Do(ctx, func(ctx context.Context) error {
			return l.limits.Delete(ctx, approvalsKey(tenant))
		})
	}
	if err := a.Validate("approvals"); err != nil {
		return err
	}
	data, err := a.MarshalJSON()
	if err != nil {
		return err
	}
	return jsretry.Do(ctx, func(ctx context.Context) error {
		_, err := l.limits.Put(ctx, approvalsKey(tenant), data)
		return err
	})
}
