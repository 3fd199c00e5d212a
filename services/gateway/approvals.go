package gateway

import (
	"bytes"
	"net/http"

	"github.com/cairn-agents/cairn/pkg/events"
)

// A tenant's default approval policy (docs/approvals.md): the policy of
// every session of the tenant whose log names none of its own, from the
// session's next load on. PUT needs admin, or tenant-admin of that tenant;
// GET any role of that tenant. Another tenant answers 404 (tenantPath).

// putApprovals stores a tenant's default: PUT /v1/tenants/{tenant}/approvals
// with a policy, or JSON null to remove it. The answer is the policy stored.
func (g *Gateway) putApprovals(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantPath(w, r)
	if !ok {
		return
	}
	body, ok := g.readBody(w, r)
	if !ok {
		return
	}
	var pol *events.Approvals
	if b := bytes.TrimSpace(body); len(b) > 0 && !bytes.Equal(b, []byte("null")) {
		p, err := events.DecodeApprovals("body", b)
		if err != nil {
			writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
			return
		}
		pol = p
	}
	l, err := g.budgets.ledger(r.Context())
	if err == nil {
		err = l.SetApprovals(r.Context(), tenant, pol)
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the approval policy was not stored: "+err.Error())
		return
	}
	writeApprovalsPolicy(w, pol)
}

// getApprovals answers a tenant's default: GET /v1/tenants/{tenant}/approvals;
// null when it has none.
func (g *Gateway) getApprovals(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenantPath(w, r)
	if !ok {
		return
	}
	l, err := g.budgets.ledger(r.Context())
	var pol *events.Approvals
	if err == nil {
		pol, err = l.Approvals(r.Context(), tenant)
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "cannot read the approval policy: "+err.Error())
		return
	}
	writeApprovalsPolicy(w, pol)
}

func writeApprovalsPolicy(w http.ResponseWriter, pol *events.Approvals) {
	writeJSON(w, http.StatusOK, map[string]any{"approvals": pol})
}

// approvalRoutes adds the routes of this file.
func (g *Gateway) approvalRoutes(handle func(pattern, route string, timed bool, h http.HandlerFunc)) {
	handle("PUT /v1/tenants/{tenant}/approvals", "approvals", true, g.putApprovals)
	handle("GET /v1/tenants/{tenant}/approvals", "approvals", true, g.getApprovals)
}
