package gateway

import (
	"bytes"
	"context"
	"net/http"

	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/cairn-agents/cairn/pkg/events"
)

// A tenant's settings, each stored in the budget ledger's bucket under the
// tenant (pkg/budget) and read by every orchestrator from there:
//
//   - /v1/tenants/{tenant}/budget: the daily token and cost limits and the
//     concurrent runs (docs/budgets.md); the answer is the budget with
//     today's use.
//   - /v1/tenants/{tenant}/approvals: the default approval policy of every
//     session whose log names none of its own, from the session's next
//     load on (docs/approvals.md); JSON null removes it.
//   - /v1/tenants/{tenant}/subagents: how deep sub-agents may nest and how
//     many task calls one batch may start (docs/subagents.md).
//
// PUT replaces the whole setting and needs admin, or tenant-admin of that
// tenant; GET needs any role of that tenant (roles.go). Another tenant
// answers 404 (tenantPath). A body that does not decode is 400 and
// changes nothing; a ledger that cannot be reached is 503.

// tenantSetting is one of those settings: how its body decodes, how it is
// stored and read (the ledger's methods), and what the routes answer.
type tenantSetting[T any] struct {
	what   string // "the sub-agent limits": names the setting in errors
	decode func(body []byte) (T, error)
	store  func(l *budget.Ledger, ctx context.Context, tenant string, v T) error
	load   func(l *budget.Ledger, ctx context.Context, tenant string) (T, error) // nil: answer reads it
	// answer writes the answer to both PUT and GET; v is what was stored
	// or read.
	answer func(w http.ResponseWriter, r *http.Request, l *budget.Ledger, tenant string, v T)
}

func (s tenantSetting[T]) put(g *Gateway) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tenant, ok := tenantPath(w, r)
		if !ok {
			return
		}
		body, ok := g.readBody(w, r)
		if !ok {
			return
		}
		v, err := s.decode(body)
		if err != nil {
			writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
			return
		}
		l, err := g.budgets.ledger(r.Context())
		if err == nil {
			err = s.store(l, r.Context(), tenant, v)
		}
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "storing "+s.what+" failed: "+err.Error())
			return
		}
		s.answer(w, r, l, tenant, v)
	}
}

func (s tenantSetting[T]) get(g *Gateway) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tenant, ok := tenantPath(w, r)
		if !ok {
			return
		}
		l, err := g.budgets.ledger(r.Context())
		var v T
		if err == nil && s.load != nil {
			v, err = s.load(l, r.Context(), tenant)
		}
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "reading "+s.what+" failed: "+err.Error())
			return
		}
		s.answer(w, r, l, tenant, v)
	}
}

func (s tenantSetting[T]) routes(g *Gateway, name string, handle func(pattern, route string, timed bool, h http.HandlerFunc)) {
	handle("PUT /v1/tenants/{tenant}/"+name, name, true, s.put(g))
	handle("GET /v1/tenants/{tenant}/"+name, name, true, s.get(g))
}

var budgetSetting = tenantSetting[budget.Limits]{
	what:   "the budget",
	decode: budget.DecodeLimits,
	store:  (*budget.Ledger).SetLimits,
	// No load: GET answers the status, which holds the limits.
	answer: func(w http.ResponseWriter, r *http.Request, l *budget.Ledger, tenant string, _ budget.Limits) {
		st, err := l.Status(r.Context(), tenant)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "reading the budget failed: "+err.Error())
			return
		}
		writeJSON(w, http.StatusOK, st)
	},
}

var approvalsSetting = tenantSetting[*events.Approvals]{
	what: "the approval policy",
	decode: func(body []byte) (*events.Approvals, error) {
		if b := bytes.TrimSpace(body); len(b) == 0 || bytes.Equal(b, []byte("null")) {
			return nil, nil // no default
		}
		return events.DecodeApprovals("body", body)
	},
	store: (*budget.Ledger).SetApprovals,
	load:  (*budget.Ledger).Approvals,
	answer: func(w http.ResponseWriter, _ *http.Request, _ *budget.Ledger, _ string, pol *events.Approvals) {
		writeJSON(w, http.StatusOK, map[string]any{"approvals": pol})
	},
}

var subagentsSetting = tenantSetting[budget.Subagents]{
	what:   "the sub-agent limits",
	decode: budget.DecodeSubagents,
	store:  (*budget.Ledger).SetSubagents,
	load:   (*budget.Ledger).Subagents,
	answer: func(w http.ResponseWriter, _ *http.Request, _ *budget.Ledger, _ string, s budget.Subagents) {
		writeJSON(w, http.StatusOK, s)
	},
}

// tenantSettingRoutes adds the routes of this file.
func (g *Gateway) tenantSettingRoutes(handle func(pattern, route string, timed bool, h http.HandlerFunc)) {
	budgetSetting.routes(g, "budget", handle)
	approvalsSetting.routes(g, "approvals", handle)
	subagentsSetting.routes(g, "subagents", handle)
}
