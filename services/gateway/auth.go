package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/services/gateway/internal/console"
)

// Authentication (DESIGN §9). Every /v1 route needs a principal: the
// request's "Authorization: Bearer <token>" is an API key (keys.go) or, when
// the gateway is given an issuer, an OIDC JWT (oidc.go). A request without
// a token, or with one that is malformed, unknown, revoked, expired, of
// another issuer or audience, or badly signed, is answered 401
// unauthenticated; the message says which of those classes it fell in and
// never echoes the token. A principal whose role is below the route's
// (roles.go) is answered 403 forbidden. /healthz, /readyz and /metrics stay
// open.
//
// A request without an Authorization header may carry the web console's
// cookie instead (internal/console): its credential is checked the same
// way, and an unsafe request (not GET, HEAD or OPTIONS) so authenticated
// must also pass the console's CSRF checks (its origin and the CSRF
// token bound to the cookie), else 403 forbidden naming the problem.

// Role is what a principal may do; each role may do what the ones below it may.
type Role string

// The roles, highest first.
const (
	// RoleAdmin runs the platform: every tenant, keys of any role, the
	// admin routes.
	RoleAdmin Role = "admin"
	// RoleTenantAdmin runs one tenant: its keys (up to tenant-admin), its
	// sessions.
	RoleTenantAdmin Role = "tenant-admin"
	// RoleMember creates sessions and sends them commands in its tenant.
	RoleMember Role = "member"
	// RoleViewer reads its tenant.
	RoleViewer Role = "viewer"
)

// Roles lists the roles, highest first.
var Roles = []Role{RoleAdmin, RoleTenantAdmin, RoleMember, RoleViewer}

// rank orders roles; 0 is no role.
func (r Role) rank() int {
	switch r {
	case RoleAdmin:
		return 4
	case RoleTenantAdmin:
		return 3
	case RoleMember:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// Allows reports whether a principal of role r may do what needs role min.
func (r Role) Allows(min Role) bool { return r.rank() > 0 && r.rank() >= min.rank() }

func validRole(r Role) error {
	if r.rank() == 0 {
		return fmt.Errorf("unknown role %q (want admin, tenant-admin, member or viewer)", r)
	}
	return nil
}

// DefaultTenant serves single-tenant use (events.DefaultTenant).
const DefaultTenant = events.DefaultTenant

// ValidateTenant checks a tenant name: the one rule, events.ValidateTenant.
func ValidateTenant(t string) error { return events.ValidateTenant(t) }

// Principal is who sent a request: an API key or a JWT's subject, the
// tenant it belongs to and its role.
type Principal struct {
	// ID is "key:<key id>" for an API key, "oidc:<sub>" for a JWT. It is
	// what commands record (events.Command.Principal).
	ID     string
	Tenant string
	Role   Role
	// Expires is when the credential stops being accepted (a JWT's exp,
	// plus the clock skew allowed); zero for an API key, which lasts until
	// it is revoked. A live event stream ends then.
	Expires time.Time
}

type principalKey struct{}

// PrincipalFrom returns the principal the request was authenticated as.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Error codes of authentication and authorization.
const (
	codeUnauthenticated = "unauthenticated"
	codeForbidden       = "forbidden"
)

// authError is a refused credential: what the client is told. Its message
// names the class of the problem, never the token.
type authError struct{ msg string }

func (e *authError) Error() string { return e.msg }

var (
	errNoToken  = &authError{"no credentials: send Authorization: Bearer <token> (an API key or an OIDC token)"}
	errBadForm  = &authError{"malformed credentials: expected Authorization: Bearer <token>"}
	errBadKey   = &authError{"unknown or revoked API key"}
	errNoOIDC   = &authError{"this gateway accepts API keys only (cairn_<id>_<secret>)"}
	errExpired  = &authError{"the token has expired"}
	errBadToken = &authError{"the token is not valid for this gateway (issuer, audience or signature)"}
)

// authenticator turns a request's credentials into a principal.
type authenticator struct {
	keys *keyStore
	oidc *oidcVerifier // nil: API keys only
}

// authenticate returns the principal of r's bearer token, or the reason
// it is refused: an *authError (401) or errAuthUnavailable (503).
func (a *authenticator) authenticate(r *http.Request) (Principal, error) {
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		if cred, ok := console.Token(r); ok {
			p, err := a.credential(r.Context(), cred)
			if err != nil {
				return Principal{}, err
			}
			if err := console.CheckCSRF(r, cred, r.Header.Get(console.CSRFHeader)); err != nil {
				return Principal{}, err
			}
			return p, nil
		}
		return Principal{}, errNoToken
	}
	scheme, token, ok := strings.Cut(h[0], " ")
	if len(h) > 1 || !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return Principal{}, errBadForm
	}
	return a.credential(r.Context(), token)
}

// credential returns the principal of a bearer token (an API key or an
// OIDC JWT), or the reason it is refused.
func (a *authenticator) credential(ctx context.Context, token string) (Principal, error) {
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return Principal{}, errBadForm
	}
	tok := secret.Secret(token)
	if strings.HasPrefix(token, tokenPrefix) {
		return a.apiKey(tok)
	}
	if strings.Count(token, ".") == 2 {
		if a.oidc == nil {
			return Principal{}, errNoOIDC
		}
		return a.oidc.verify(ctx, tok)
	}
	return Principal{}, errBadForm
}

// errAuthUnavailable: the gateway cannot check credentials yet (the keys
// cache is loading, the issuer is unreachable): 503, not 401.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }

var errKeysLoading = &unavailableError{"the gateway is still loading its API keys; try again in a moment"}

func (a *authenticator) apiKey(tok secret.Secret) (Principal, error) {
	id, hash, err := ParseKey(tok)
	if err != nil {
		return Principal{}, errBadForm
	}
	if !a.keys.ready() {
		return Principal{}, errKeysLoading
	}
	rec, ok := a.keys.check(id, hash)
	if !ok {
		return Principal{}, errBadKey
	}
	return Principal{ID: "key:" + rec.ID, Tenant: rec.Tenant, Role: rec.Role}, nil
}

// guard wraps a route's handler: it authenticates the request and checks
// the principal's role against min before h runs.
func (g *Gateway) guard(route string, min Role, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := g.auth.authenticate(r)
		if err != nil {
			g.refuse(w, route, err)
			return
		}
		if !p.Role.Allows(min) {
			g.cfg.Logger.Info("gateway: forbidden", "route", route, "principal", p.ID, "role", string(p.Role), "needs", string(min))
			writeError(w, http.StatusForbidden, codeForbidden, fmt.Sprintf("role %s may not do this (it needs %s or above)", p.Role, min))
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}
}

// refuse answers a request whose credentials were refused.
func (g *Gateway) refuse(w http.ResponseWriter, route string, err error) {
	var ue *unavailableError
	if errors.As(err, &ue) {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, ue.msg)
		return
	}
	var ce *console.CSRFError
	if errors.As(err, &ce) {
		g.cfg.Logger.Info("gateway: refused a console request", "route", route, "reason", ce.Msg)
		writeError(w, http.StatusForbidden, codeForbidden, ce.Msg)
		return
	}
	msg := errBadToken.msg
	var ae *authError
	if errors.As(err, &ae) {
		msg = ae.msg
	}
	g.metrics.authFailures.WithLabelValues(route).Inc()
	g.cfg.Logger.Debug("gateway: unauthenticated", "route", route, "reason", msg)
	w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
	writeError(w, http.StatusUnauthorized, codeUnauthenticated, msg)
}
