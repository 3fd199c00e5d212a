package gateway

import (
	"net/http"

	"github.com/cairn-agents/cairn/pkg/events"
)

// tenantOf is the tenant request r acts for: the one place the gateway
// decides it (docs/tenancy.md). Until the gateway authenticates
// principals, every request is the platform's and may address a tenant
// with the [events.HeaderTenant] header; without one it acts for the
// default tenant, so single-tenant use needs no header. When principals
// land, this function returns the principal's tenant (and honours the
// header for an admin only); nothing else in the gateway changes.
func tenantOf(r *http.Request) (string, error) {
	t := r.Header.Get(events.HeaderTenant)
	if t == "" {
		return events.DefaultTenant, nil
	}
	if err := events.ValidateTenant(t); err != nil {
		return "", err
	}
	return t, nil
}

// tenant writes a 400 naming the problem when r's tenant is invalid.
func tenant(w http.ResponseWriter, r *http.Request) (string, bool) {
	t, err := tenantOf(r)
	if err != nil {
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
