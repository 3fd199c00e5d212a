package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// Budgets (pkg/budget, docs/budgets.md): the route of a tenant's usage
// (the projector's read model) and the check before a prompt is stored.
//
// The budget's own routes are a tenant setting (tenantsettings.go). GET
// /v1/tenants/{tenant}/usage needs admin, or any role of that tenant.
//
// A prompt, steer or follow-up to a session whose tenant is over budget
// is refused before it is stored: 429 budget_exceeded, with Retry-After
// at the next UTC midnight when a daily limit is spent. The orchestrator
// checks again (commands that reach it another way, and prompts that race
// with the budget), and its refusal answers 429 too with ?wait=applied.

const codeBudgetExceeded = budget.Code

// budgets is the gateway's view of the budget ledger and of sessions'
// tenants.
type budgets struct {
	js    jetstream.JetStream
	names events.Names
	mu    struct {
		sync.Mutex
		ledger *budget.Ledger
	}
}

func (b *budgets) ledger(ctx context.Context) (*budget.Ledger, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.ledger != nil {
		return b.mu.ledger, nil
	}
	l, err := budget.Open(ctx, b.js, budget.Options{Names: b.names})
	if err != nil {
		return nil, err
	}
	b.mu.ledger = l
	return l, nil
}

// admits reports whether cmd may be stored; false after answering 429
// (over budget). A budget that cannot be read lets it through: the
// orchestrator checks before every model call.
func (g *Gateway) admits(w http.ResponseWriter, r *http.Request, ref events.SessionRef, cmd events.Command) bool {
	switch cmd.Type {
	case events.CmdPrompt, events.CmdSteer, events.CmdFollowUp:
	default:
		return true
	}
	ctx := r.Context()
	l, err := g.budgets.ledger(ctx)
	if err == nil {
		err = l.Check(ctx, ref.Tenant, ref.ID)
	}
	var ex *budget.Exceeded
	if errors.As(err, &ex) {
		writeOverBudget(w, cmd.ID, ex)
		return false
	}
	if err != nil {
		g.cfg.Logger.Warn("gateway: cannot check the budget; the orchestrator will", "session", cmd.SessionID, "err", err)
	}
	return true
}

func writeOverBudget(w http.ResponseWriter, commandID string, ex *budget.Exceeded) {
	if ex.Limit != budget.LimitRuns {
		now := time.Now().UTC()
		midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		w.Header().Set("Retry-After", strconv.Itoa(int(midnight.Sub(now).Seconds())+1))
	}
	writeJSON(w, http.StatusTooManyRequests, map[string]any{
		"error":     apiError{Code: codeBudgetExceeded, Message: ex.Error()},
		"commandId": commandID, "reason": codeBudgetExceeded,
	})
}

// tenantPath returns the tenant of the path, after answering 400 if it is
// not a tenant name.
//
// A principal that is not a platform admin sees only its own tenant: any
// other, existing or not, answers 404, so the answer tells nothing of
// which tenants exist.
func tenantPath(w http.ResponseWriter, r *http.Request) (string, bool) {
	t := r.PathValue("tenant")
	if err := budget.ValidateTenant(t); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "tenant in path: "+err.Error())
		return "", false
	}
	if p, ok := PrincipalFrom(r.Context()); !ok || (p.Role != RoleAdmin && p.Tenant != t) {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no tenant %q", t))
		return "", false
	}
	return t, true
}

// tenantUsage answers a tenant's usage by day and model from the
// projector: GET /v1/tenants/{tenant}/usage.
func (g *Gateway) tenantUsage(w http.ResponseWriter, r *http.Request) {
	t, ok := tenantPath(w, r)
	if !ok {
		return
	}
	// The projector reads the tenant from the header: the one tenantPath
	// authorised (the principal's own, or any for an admin).
	r.Header.Set(events.HeaderTenant, t)
	g.queries()(w, r)
}

// budgetRoutes adds the routes of this file.
func (g *Gateway) budgetRoutes(handle func(pattern, route string, timed bool, h http.HandlerFunc)) {
	handle("GET /v1/tenants/{tenant}/usage", "query", true, g.tenantUsage)
}
