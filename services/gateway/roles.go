package gateway

// routeRoles is the one table of who may do what: each /v1 route and the
// lowest role that may call it. routes() refuses to register a /v1 route
// missing here, and docs/security.md holds this table (a test renders it
// from here and compares). A role may call every route of the roles below
// it. Finer rules live with their handlers and are listed in
// routeNotes: which keys a tenant-admin may create and see.
var routeRoles = map[string]Role{
	"POST /v1/sessions":                          RoleMember,
	"GET /v1/sessions":                           RoleViewer,
	"GET /v1/sessions/{id}":                      RoleViewer,
	"POST /v1/sessions/{id}/commands":            RoleMember,
	"GET /v1/sessions/{id}/commands/{commandId}": RoleViewer,
	"GET /v1/sessions/{id}/events":               RoleViewer,
	"GET /v1/sessions/{id}/entries":              RoleViewer,
	"GET /v1/sessions/{id}/records":              RoleViewer,
	"GET /v1/sessions/{id}/context":              RoleViewer,
	"GET /v1/sessions/{id}/tree":                 RoleViewer,
	"GET /v1/sessions/{id}/export":               RoleViewer,
	"GET /v1/sessions/{id}/replay":               RoleViewer,
	"POST /v1/import":                            RoleMember,
	"GET /v1/audit/tool-calls":                   RoleViewer,
	"GET /v1/approvals":                          RoleViewer,
	"GET /v1/usage":                              RoleViewer,
	"GET /v1/openapi.json":                       RoleViewer,
	"POST /v1/keys":                              RoleTenantAdmin,
	"GET /v1/keys":                               RoleTenantAdmin,
	"DELETE /v1/keys/{id}":                       RoleTenantAdmin,
	"PUT /v1/tenants/{tenant}/budget":            RoleTenantAdmin,
	"GET /v1/tenants/{tenant}/budget":            RoleViewer,
	"GET /v1/tenants/{tenant}/usage":             RoleViewer,
	"GET /v1/skills":                             RoleViewer,
	"GET /v1/skills/{name}":                      RoleViewer,
	"PUT /v1/skills/{name}":                      RoleTenantAdmin,
	"DELETE /v1/skills/{name}":                   RoleTenantAdmin,
	"GET /v1/templates":                          RoleViewer,
	"GET /v1/templates/{name}":                   RoleViewer,
	"PUT /v1/templates/{name}":                   RoleTenantAdmin,
	"DELETE /v1/templates/{name}":                RoleTenantAdmin,
	"GET /v1/system-prompt":                      RoleViewer,
	"GET /v1/system-prompt/{name}":               RoleViewer,
	"PUT /v1/system-prompt/{name}":               RoleTenantAdmin,
	"DELETE /v1/system-prompt/{name}":            RoleTenantAdmin,
	"PUT /v1/tenants/{tenant}/approvals":         RoleTenantAdmin,
	"GET /v1/tenants/{tenant}/approvals":         RoleViewer,
	"PUT /v1/tenants/{tenant}/subagents":         RoleTenantAdmin,
	"GET /v1/tenants/{tenant}/subagents":         RoleViewer,
	"POST /v1/admin/projector/rebuild":           RoleAdmin,
	"GET /v1/admin/projector/rebuild":            RoleAdmin,
	"GET /v1/admin/projector/digest":             RoleAdmin,
}

// routeNotes are the rules a route's handler adds to its role.
var routeNotes = map[string]string{
	"POST /v1/keys":                      "a tenant-admin creates keys of its own tenant only, of role tenant-admin or below",
	"GET /v1/keys":                       "a tenant-admin sees its own tenant's keys only",
	"DELETE /v1/keys/{id}":               "a tenant-admin revokes its own tenant's keys only; another tenant's key is not found (404)",
	"PUT /v1/tenants/{tenant}/budget":    "a tenant-admin sets its own tenant's budget only; another tenant is not found (404)",
	"GET /v1/tenants/{tenant}/budget":    "below admin, its own tenant only; another tenant is not found (404)",
	"GET /v1/tenants/{tenant}/usage":     "below admin, its own tenant only; another tenant is not found (404)",
	"PUT /v1/tenants/{tenant}/approvals": "a tenant-admin sets its own tenant's default only; another tenant is not found (404)",
	"GET /v1/tenants/{tenant}/approvals": "below admin, its own tenant only; another tenant is not found (404)",
	"PUT /v1/tenants/{tenant}/subagents": "a tenant-admin sets its own tenant's limits only; another tenant is not found (404)",
	"GET /v1/tenants/{tenant}/subagents": "below admin, its own tenant only; another tenant is not found (404)",
}

// openRoutes need no principal: the operations routes.
var openRoutes = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}
