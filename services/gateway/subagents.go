package gateway

import (
	"net/http"

	"github.com/cairn-agents/cairn/pkg/budget"
)

// A tenant's sub-agent limits (docs/subagents.md): how deep sub-agents may
// nest and how many task calls one batch may start, for the task calls
// its sessions prepare from their next load on. PUT needs admin, or
// tenant-admin of that tenant; GET any role of that tenant. Another tenant
// answers 404 (tenantPath).

// putSubagents stores a tenant's limits: PUT /v1/tenants/{tenant}/subagents
// with {maxDepth, maxFanOut}. The answer is the limits stored.
func (g *Gateway) putSubagents(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantPath(w, r)
	if !ok {
		return
	}
	body, ok := g.readBody(w, r)
	if !ok {
		return
	}
	s, err := budget.DecodeSubagents(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	l, err := g.budgets.ledger(r.Context())
	if err == nil {
		err = l.SetSubagents(r.Context(), tenant, s)
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the sub-agent limits were not stored: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s)
}

// getSubagents answers a tenant's limits: GET /v1/tenants/{tenant}/subagents;
// the defaults when it set none.
func (g *Gateway) getSubagents(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantPath(w, r)
	if !ok {
		return
	}
	l, err := g.budgets.ledger(r.Context())
	var s budget.Subagents
	if err == nil {
		s, err = l.Subagents(r.Context(), tenant)
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "cannot read the sub-agent limits: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s)
}

// subagentRoutes adds the routes of this file.
func (g *Gateway) subagentRoutes(handle func(pattern, route string, timed bool, h http.HandlerFunc)) {
	handle("PUT /v1/tenants/{tenant}/subagents", "subagents", true, g.putSubagents)
	handle("GET /v1/tenants/{tenant}/subagents", "subagents", true, g.getSubagents)
}
