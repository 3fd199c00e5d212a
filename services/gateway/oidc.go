package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/coreos/go-oidc/v3/oidc"
)

// OIDC bearer tokens. With OIDCConfig.Issuer set, a bearer token that is a
// JWT is verified by go-oidc against the issuer's keys (its JWKS, found by
// discovery): the signature with an algorithm the issuer announces (never
// "none"), the issuer, the audience, the expiry. A token signed with a key
// id the cached JWKS lacks makes go-oidc fetch the JWKS again, so the
// issuer's key rotation needs nothing of the operator. Clocks may differ by
// ClockSkew: a token is accepted until ClockSkew after its exp (and, by
// go-oidc, up to five minutes before its nbf).
//
// Claims map to a principal: the subject ("sub") is its id, "oidc:<sub>";
// TenantClaim names its tenant; RoleClaim (a string, or an array such as
// groups) its role, each value mapped through RoleMap (or, with no map,
// taken as a role name); of several roles the highest wins. A token whose
// claims map to no role, or to an invalid tenant, is refused.

// OIDCConfig configures JWT bearer tokens. The zero value (no Issuer)
// accepts API keys only.
type OIDCConfig struct {
	// Issuer is the issuer URL; discovery reads
	// Issuer/.well-known/openid-configuration.
	Issuer string
	// Audience must be in the token's aud. Required with Issuer.
	Audience string
	// TenantClaim names the claim holding the tenant. Default "cairn_tenant".
	TenantClaim string
	// DefaultTenant is the tenant of a token without TenantClaim. Default
	// "" : such a token is refused.
	DefaultTenant string
	// RoleClaim names the claim holding the role (a string or an array of
	// strings). Default "cairn_role".
	RoleClaim string
	// RoleMap maps the claim's values to roles. Empty: the values are role
	// names (admin, tenant-admin, member, viewer).
	RoleMap map[string]Role
	// ClockSkew is how far the gateway's clock may trail the issuer's.
	// Default 1 minute.
	ClockSkew time.Duration
	// HTTPClient fetches discovery and the JWKS. Default http.DefaultClient.
	HTTPClient *http.Client
}

func (c *OIDCConfig) setDefaults() {
	if c.TenantClaim == "" {
		c.TenantClaim = "cairn_tenant"
	}
	if c.RoleClaim == "" {
		c.RoleClaim = "cairn_role"
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = time.Minute
	}
	if c.HTTPClient == nil {
		c.HTTPClient = http.DefaultClient
	}
}

// Validate reports the first invalid field.
func (c *OIDCConfig) Validate() error {
	if c.Issuer == "" {
		if c.Audience != "" || len(c.RoleMap) > 0 {
			return errors.New("gateway: OIDC audience or role map given without an issuer")
		}
		return nil
	}
	if c.Audience == "" {
		return errors.New("gateway: OIDC issuer given without an audience")
	}
	if c.ClockSkew < 0 || c.ClockSkew > 10*time.Minute {
		return fmt.Errorf("gateway: OIDC clock skew must be 0-10m, got %s", c.ClockSkew)
	}
	if c.DefaultTenant != "" {
		if err := ValidateTenant(c.DefaultTenant); err != nil {
			return fmt.Errorf("gateway: OIDC default tenant: %w", err)
		}
	}
	for k, r := range c.RoleMap {
		if err := validRole(r); err != nil {
			return fmt.Errorf("gateway: OIDC role map %q: %w", k, err)
		}
	}
	return nil
}

// oidcVerifier verifies JWTs of one issuer. Discovery runs at the first
// token and again after a failure, at most every retryEvery. A verified
// token's principal is kept by the token's digest until the token expires
// (see jwtCache), so a client that sends the same token on every request
// pays for one signature check.
type oidcVerifier struct {
	cfg   OIDCConfig
	cache *jwtCache
	mu    struct {
		sync.Mutex
		verifier *oidc.IDTokenVerifier
		failedAt time.Time
		err      error
	}
}

const retryEvery = 5 * time.Second

func newOIDCVerifier(cfg OIDCConfig) *oidcVerifier {
	cfg.setDefaults()
	return &oidcVerifier{cfg: cfg, cache: newJWTCache(jwtCacheSize, time.Now)}
}

func (v *oidcVerifier) verifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.verifier != nil {
		return v.mu.verifier, nil
	}
	if !v.mu.failedAt.IsZero() && time.Since(v.mu.failedAt) < retryEvery {
		return nil, v.mu.err
	}
	// The key set outlives this request: its fetches run under a context
	// of their own carrying the client (go-oidc ignores its cancellation).
	bg := oidc.ClientContext(context.Background(), v.cfg.HTTPClient)
	dctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, v.cfg.HTTPClient), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(dctx, v.cfg.Issuer)
	if err != nil {
		v.mu.failedAt = time.Now()
		v.mu.err = &unavailableError{"the identity provider cannot be reached to check the token; try again later"}
		return nil, v.mu.err
	}
	skew := v.cfg.ClockSkew
	v.mu.verifier = p.VerifierContext(bg, &oidc.Config{ClientID: v.cfg.Audience,
		Now: func() time.Time { return time.Now().Add(-skew) }})
	return v.mu.verifier, nil
}

// verify returns the principal of a JWT: from the cache when this token
// was verified before and has not expired, else by verifyToken.
func (v *oidcVerifier) verify(ctx context.Context, tok secret.Secret) (Principal, error) {
	if p, ok := v.cache.get(tok.Reveal()); ok {
		return p, nil
	}
	p, err := v.verifyToken(ctx, tok)
	if err != nil {
		return Principal{}, err
	}
	v.cache.put(tok.Reveal(), p)
	return p, nil
}

// verifyToken checks a JWT's signature and claims with go-oidc and maps
// its claims to a principal.
func (v *oidcVerifier) verifyToken(ctx context.Context, tok secret.Secret) (Principal, error) {
	ver, err := v.verifier(ctx)
	if err != nil {
		return Principal{}, err
	}
	t, err := ver.Verify(ctx, tok.Reveal())
	if err != nil {
		var exp *oidc.TokenExpiredError
		if errors.As(err, &exp) {
			return Principal{}, errExpired
		}
		return Principal{}, errBadToken
	}
	var claims map[string]json.RawMessage
	if err := t.Claims(&claims); err != nil || !printableID(t.Subject) {
		return Principal{}, errBadToken
	}
	tenant := v.cfg.DefaultTenant
	if raw, ok := claims[v.cfg.TenantClaim]; ok {
		if json.Unmarshal(raw, &tenant) != nil {
			return Principal{}, &authError{fmt.Sprintf("the token's %s claim is not a string", v.cfg.TenantClaim)}
		}
	}
	if tenant == "" {
		return Principal{}, &authError{fmt.Sprintf("the token has no %s claim (the tenant)", v.cfg.TenantClaim)}
	}
	if ValidateTenant(tenant) != nil {
		return Principal{}, &authError{fmt.Sprintf("the token's %s claim is not a valid tenant", v.cfg.TenantClaim)}
	}
	role := v.role(claims[v.cfg.RoleClaim])
	if role == "" {
		return Principal{}, &authError{fmt.Sprintf("the token's %s claim maps to no role", v.cfg.RoleClaim)}
	}
	// The verifier accepts the token until exp plus the skew; so does a
	// stream opened with it.
	return Principal{ID: "oidc:" + t.Subject, Tenant: tenant, Role: role, Expires: t.Expiry.Add(v.cfg.ClockSkew)}, nil
}

// role maps the role claim (a string or an array of strings) to the
// highest role any of its values maps to; "" when none does.
func (v *oidcVerifier) role(raw json.RawMessage) Role {
	var values []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		values = []string{one}
	} else if json.Unmarshal(raw, &values) != nil {
		return ""
	}
	var best Role
	for _, val := range values {
		r := Role(val)
		if len(v.cfg.RoleMap) > 0 {
			r = v.cfg.RoleMap[val]
		}
		if r.rank() > best.rank() {
			best = r
		}
	}
	return best
}

// printableID reports whether a JWT subject can be a principal id: 1–200
// printable ASCII characters.
func printableID(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
