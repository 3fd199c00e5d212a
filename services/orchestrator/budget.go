package orchestrator

import (
	"context"
	"errors"

	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/cairn-agents/cairn/pkg/events"
)

// Budgets (pkg/budget, docs/budgets.md). The hooks are three: the session's
// harness calls its models through the session's budget.Meter (newHarness),
// which holds a run slot from a run's first call to its agent_end and
// reserves and settles each call; a prompt that would start a run while
// the tenant is over budget is refused with code budget_exceeded
// (startPrompt); and Run renews what this instance holds. Reservations and
// slots of an instance that dies lapse after three lease TTLs.

// openBudget opens the budget ledger, owned by this instance.
func (o *Orchestrator) openBudget(ctx context.Context, replicas int) error {
	l, err := budget.Open(ctx, o.js, budget.Options{Names: o.cfg.Names, Owner: o.cfg.Instance,
		HoldTTL: 3 * o.cfg.LeaseTTL, Replicas: replicas, Logger: o.log})
	if err != nil {
		return err
	}
	o.budget = l
	o.wg.Go(func() { _ = l.Run(ctx) }) // returns nil when ctx ends
	return nil
}

// meter is the session's budget meter.
func (a *actor) meter(h events.Entry) *budget.Meter { return a.o.budget.Meter(h.Tenant, a.sid.ID) }

// refusedOverBudget refuses the prompt commandID, which would start a run,
// when the session's tenant is over budget. A ledger that cannot be read
// lets it through: its first model call checks again, and waits.
func (a *actor) refusedOverBudget(ctx context.Context, commandID string) bool {
	err := a.o.budget.Check(ctx, budget.TenantOf(a.header().Tenant), a.sid.ID)
	var ex *budget.Exceeded
	if errors.As(err, &ex) {
		a.reject(ctx, events.Command{ID: commandID, Type: events.CmdPrompt}, budget.Code, err.Error())
		return true
	}
	if err != nil {
		a.log.Warn("cannot check the budget before a run; its model calls check it", "err", err)
	}
	return false
}
