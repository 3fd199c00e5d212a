package events

import (
	"strings"
)

// DefaultTenant is the tenant of single-tenant use: every session a
// principal without a tenant creates, and every session written before
// tenants existed (docs/tenancy.md).
const DefaultTenant = "default"

// MaxTenantLen is the longest tenant name.
const MaxTenantLen = 32

// ValidateTenant reports whether t is a valid tenant: 1–32 characters of
// [a-z0-9-]. The error names the problem.
func ValidateTenant(t string) error {
	if t == "" {
		return fieldErr("tenant", "tenant is empty")
	}
	if len(t) > MaxTenantLen {
		return fieldErr("tenant", "tenant is %d characters long; the limit is %d", len(t), MaxTenantLen)
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fieldErr("tenant", "tenant %q has %q at position %d; only a-z 0-9 - are allowed", t, c, i)
		}
	}
	return nil
}

// SessionRef names one session: session ids are scoped by their tenant, so
// tenant acme's session s1 and tenant beta's s1 are different sessions.
// Everything keyed by a session (subjects, KV keys, Nats-Msg-Ids, actors,
// workspaces, read-model keys) keys on the pair; its [SessionRef.String]
// form, <tenant>.<id>, is the subject form and never ambiguous (neither
// part may hold a dot).
type SessionRef struct {
	Tenant string
	ID     string
}

// Ref returns the session id of tenant; an empty tenant is [DefaultTenant].
func Ref(tenant, id string) SessionRef {
	if tenant == "" {
		tenant = DefaultTenant
	}
	return SessionRef{Tenant: tenant, ID: id}
}

// DefaultRef is session id of the [DefaultTenant].
func DefaultRef(id string) SessionRef { return SessionRef{Tenant: DefaultTenant, ID: id} }

// String is the subject form <tenant>.<id>.
func (r SessionRef) String() string { return r.Tenant + "." + r.ID }

// Validate reports whether both parts are valid ([ValidateTenant],
// [ValidateSessionID]).
func (r SessionRef) Validate() error {
	if err := ValidateTenant(r.Tenant); err != nil {
		return err
	}
	return ValidateSessionID(r.ID)
}

// ParseSessionRef reads the subject form <tenant>.<id> of a [SessionRef].
func ParseSessionRef(s string) (SessionRef, error) {
	t, id, ok := strings.Cut(s, ".")
	if !ok {
		return SessionRef{}, fieldErr("session", "%q is not <tenant>.<session id>", s)
	}
	r := SessionRef{Tenant: t, ID: id}
	return r, r.Validate()
}
