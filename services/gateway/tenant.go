package gateway

import (
	"errors"
	"net/http"

	"github.com/cairn-agents/cairn/pkg/events"
)

// errOtherTenant refuses a tenant header naming another tenant than the
// principal's: only a platform admin may act for any tenant. The answer
// is the same whether that tenant exists or not.
var errOtherTenant = errors.New("only an admin may act for another tenant than its own")

// errAllNotList refuses [allTenants] on a route that lists nothing.
var errAllNotList = errors.New(`"*" (every tenant) is accepted on the list routes only: ` +
	"GET /v1/sessions, /v1/approvals, /v1/audit/tool-calls and /v1/usage")

// allTenants as the tenant header lists every tenant's rows at once; a
// platform admin may send it on the routes of listRoutes, whose rows each
// name their tenant (DESIGN §9).
const allTenants = "*"

// listRoutes are the routes that take [allTenants].
var listRoutes = map[string]bool{
	"GET /v1/sessions":         true,
	"GET /v1/approvals":        true,
	"GET /v1/audit/tool-calls": true,
	"GET /v1/usage":            true,
}

// tenantOf is the tenant request r acts for: the one place the gateway
// decides it (docs/tenancy.md). It is the principal's tenant; a platform
// admin may name another with the [events.HeaderTenant] header, and a
// header naming the principal's own tenant is accepted from anyone. On a
// list route an admin may send [allTenants]; the answer is then "*".
func tenantOf(r *http.Request) (string, error) {
	p, ok := PrincipalFrom(r.Context())
	if !ok {
		return "", errors.New("no principal") // every /v1 route is guarded first
	}
	own := p.Tenant
	if own == "" {
		own = events.DefaultTenant
	}
	t := r.Header.Get(events.HeaderTenant)
	if t == "" {
		return own, nil
	}
	if t == allTenants {
		switch {
		case p.Role != RoleAdmin:
			return "", errOtherTenant
		case !listRoutes[r.Pattern]:
			return "", errAllNotList
		}
		return t, nil
	}
	if err := events.ValidateTenant(t); err != nil {
		return "", err
	}
	if t != own && p.Role != RoleAdmin {
		return "", errOtherTenant
	}
	return t, nil
}

// tenant writes a 400 naming the problem when r's tenant header is
// invalid, and a 403 when it names another tenant than a non-admin's.
func tenant(w http.ResponseWriter, r *http.Request) (string, bool) {
	t, err := tenantOf(r)
	switch {
	case errors.Is(err, errOtherTenant):
		writeError(w, http.StatusForbidden, codeForbidden, events.HeaderTenant+" header: "+err.Error())
		return "", false
	case err != nil:
		writeError(w, http.StatusBadRequest, codeInvalid, events.HeaderTenant+" header: "+err.Error())
		return "", false
	}
	return t, true
}

// sessionRef is the session the path's {id} names in r's tenant, or false
// after a 400. Every route reads a session through it, so another
// tenant's session of that id is simply not found: the answer is the one a
// missing session gets, body included.
func sessionRef(w http.ResponseWriter, r *http.Request) (events.SessionRef, bool) {
	t, ok := tenant(w, r)
	if !ok {
		return events.SessionRef{}, false
	}
	sid := r.PathValue("id")
	if !validSessionPath(w, sid) {
		return events.SessionRef{}, false
	}
	return events.SessionRef{Tenant: t, ID: sid}, true
}
