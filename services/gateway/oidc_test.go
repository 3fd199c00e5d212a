package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// issuer is a real OIDC issuer in process: discovery, a JWKS that can be
// rotated, and tokens signed with its current key.
type issuer struct {
	srv *httptest.Server
	mu  struct {
		sync.Mutex
		keys    []jose.JSONWebKey // private keys; the JWKS shows their public halves
		fetches int
	}
}

func newIssuer(t testing.TB) *issuer {
	t.Helper()
	is := &issuer{}
	is.rotate(t, "k1")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"ES256"}, "authorization_endpoint": is.srv.URL + "/auth",
			"token_endpoint": is.srv.URL + "/token"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.mu.fetches++
		var set jose.JSONWebKeySet
		for _, k := range is.mu.keys {
			set.Keys = append(set.Keys, k.Public())
		}
		_ = json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func newECKey(t testing.TB, kid string) jose.JSONWebKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}
}

// rotate adds a new signing key kid; tokens are signed with it from now on.
func (is *issuer) rotate(t testing.TB, kid string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.mu.keys = append(is.mu.keys, newECKey(t, kid))
}

func (is *issuer) fetches() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.mu.fetches
}

// claims are a token's claims: the registered ones and Cairn's.
type claims struct {
	jwt.Claims
	Tenant string `json:"cairn_tenant,omitempty"`
	Role   any    `json:"cairn_role,omitempty"`
}

func (is *issuer) claims(sub string) claims {
	now := time.Now()
	return claims{Claims: jwt.Claims{Issuer: is.srv.URL, Subject: sub, Audience: jwt.Audience{"cairn"},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(10 * time.Minute))},
		Tenant: "acme", Role: "member"}
}

// sign signs c with key.
func sign(t testing.TB, key jose.JSONWebKey, c claims) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// token signs c with the issuer's current key.
func (is *issuer) token(t testing.TB, c claims) string {
	is.mu.Lock()
	key := is.mu.keys[len(is.mu.keys)-1]
	is.mu.Unlock()
	return sign(t, key, c)
}

func oidcFixture(t *testing.T, is *issuer, mutate func(*OIDCConfig)) *fixture {
	t.Helper()
	return newFixture(t, func(c *Config) {
		c.OIDC = OIDCConfig{Issuer: is.srv.URL, Audience: "cairn", HTTPClient: is.srv.Client()}
		if mutate != nil {
			mutate(&c.OIDC)
		}
	})
}

// whoami returns the principal a token authenticates as, read from the
// command it stores, or the refusal.
func whoami(t *testing.T, f *fixture, token string) (int, map[string]any) {
	t.Helper()
	code, out, _ := f.call(t, "Bearer "+token, "GET", "/v1/keys", "")
	return code, out
}

func TestOIDCTokens(t *testing.T) {
	is := newIssuer(t)
	f := oidcFixture(t, is, func(c *OIDCConfig) {
		c.RoleMap = map[string]Role{"cairn-admins": RoleTenantAdmin, "cairn-users": RoleMember, "member": RoleMember}
		c.ClockSkew = 2 * time.Minute
	})
	good := is.claims("alice")
	good.Role = []string{"staff", "cairn-admins"} // groups: the highest mapped role wins
	if code, out := whoami(t, f, is.token(t, good)); code != 200 {
		t.Fatalf("a good token = %d %v", code, out)
	}
	// The principal a JWT makes: oidc:<sub>, its tenant and role.
	code, out, _ := f.call(t, "Bearer "+is.token(t, good), "POST", "/v1/keys", `{"role":"viewer"}`)
	if code != 201 || out["createdBy"] != "oidc:alice" || out["tenant"] != "acme" {
		t.Fatalf("a key created by alice = %d %v", code, out)
	}

	other := newIssuer(t) // another issuer's key and URL
	otherKey := newECKey(t, "k1")
	expired := is.claims("bob")
	expired.Expiry = jwt.NewNumericDate(time.Now().Add(-3 * time.Minute))
	withinSkew := is.claims("bob")
	withinSkew.Expiry = jwt.NewNumericDate(time.Now().Add(-30 * time.Second))
	wrongIss := is.claims("bob")
	wrongIss.Issuer = other.srv.URL
	wrongAud := is.claims("bob")
	wrongAud.Audience = jwt.Audience{"someone-else"}
	noRole := is.claims("bob")
	noRole.Role = "nobody"
	noTenant := is.claims("bob")
	noTenant.Tenant = ""
	badTenant := is.claims("bob")
	badTenant.Tenant = "Acme Corp"
	payload, _ := json.Marshal(is.claims("mallory"))
	enc := base64.RawURLEncoding.EncodeToString
	algNone := enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(payload) + "."
	signed := is.token(t, is.claims("mallory"))
	parts := strings.Split(signed, ".")
	tampered := parts[0] + "." + enc([]byte(strings.Replace(string(payload), `"member"`, `"admin"`, 1))) + "." + parts[2]
	hs256 := func() string { // signed with a shared secret, as if the JWKS's public key were one
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.Signed(s).Claims(is.claims("mallory")).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}()
	refused := []struct{ name, token, msg string }{
		{"expired", is.token(t, expired), "the token has expired"},
		{"wrong issuer", other.token(t, wrongIss), "not valid for this gateway"},
		{"our issuer's name, another's key", sign(t, otherKey, is.claims("bob")), "not valid for this gateway"},
		{"wrong audience", is.token(t, wrongAud), "not valid for this gateway"},
		{"alg none", algNone, "not valid for this gateway"},
		{"tampered claims", tampered, "not valid for this gateway"},
		{"HS256", hs256, "not valid for this gateway"},
		{"three dots of garbage", "a.b.c", "not valid for this gateway"},
		{"no role mapped", is.token(t, noRole), "maps to no role"},
		{"no tenant", is.token(t, noTenant), "has no cairn_tenant claim"},
		{"bad tenant", is.token(t, badTenant), "not a valid tenant"},
	}
	for _, c := range refused {
		code, out := whoami(t, f, c.token)
		if code != 401 || errCode(out) != "unauthenticated" || !strings.Contains(errMsg(out), c.msg) {
			t.Errorf("%s: = %d %v, want 401 %q", c.name, code, out, c.msg)
		}
		if strings.Contains(errMsg(out), c.token) || strings.Contains(errMsg(out), "mallory") {
			t.Errorf("%s: the answer shows the token or its claims: %v", c.name, out)
		}
	}
	// A member token is 403 on a tenant-admin route, not 401.
	if code, out := whoami(t, f, is.token(t, is.claims("carol"))); code != 403 || errCode(out) != "forbidden" {
		t.Errorf("a member's JWT on /v1/keys = %d %v, want 403", code, out)
	}
	// Within the clock skew an expired token still passes.
	if code, out := whoami(t, f, is.token(t, withinSkew)); code != 403 {
		t.Errorf("a token expired 30 s ago, skew 2 min = %d %v, want past authentication (403 for a member)", code, out)
	}

	// Rotation: the issuer signs with a new key the gateway has not seen;
	// it fetches the JWKS again and accepts the token.
	before := is.fetches()
	is.rotate(t, "k2")
	if code, out := whoami(t, f, is.token(t, good)); code != 200 {
		t.Fatalf("a token of the rotated key = %d %v", code, out)
	}
	if is.fetches() <= before {
		t.Errorf("the JWKS was not fetched again for a new key id")
	}
	// Tokens of the old key still pass while the issuer still shows it.
	is.mu.Lock()
	old := is.mu.keys[0]
	is.mu.Unlock()
	if code, out := whoami(t, f, sign(t, old, good)); code != 200 {
		t.Errorf("a token of the previous key = %d %v", code, out)
	}
}

// A gateway whose issuer cannot be reached answers JWTs 503, not 401, and
// still takes API keys.
func TestOIDCIssuerDown(t *testing.T) {
	is := newIssuer(t)
	tok := is.token(t, is.claims("alice"))
	f := oidcFixture(t, is, nil)
	is.srv.Close()
	if code, out := whoami(t, f, tok); code != 503 || errCode(out) != "unavailable" {
		t.Errorf("a JWT with the issuer down = %d %v, want 503", code, out)
	}
	if code, out := whoami(t, f, f.admin.Reveal()); code != 200 {
		t.Errorf("an API key with the issuer down = %d %v", code, out)
	}
}

func TestOIDCConfigRefused(t *testing.T) {
	for _, c := range []struct {
		cfg OIDCConfig
		msg string
	}{
		{OIDCConfig{Issuer: "https://id.example"}, "without an audience"},
		{OIDCConfig{Audience: "cairn"}, "without an issuer"},
		{OIDCConfig{Issuer: "https://id.example", Audience: "a", RoleMap: map[string]Role{"g": "root"}}, `unknown role "root"`},
		{OIDCConfig{Issuer: "https://id.example", Audience: "a", DefaultTenant: "A B"}, "default tenant"},
		{OIDCConfig{Issuer: "https://id.example", Audience: "a", ClockSkew: time.Hour}, "clock skew"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: Validate = %v, want %q", c.cfg, err, c.msg)
		}
	}
}

// A live event stream opened with a JWT ends when the token expires (exp
// plus the clock skew): the stream does not outlive the credential.
func TestExpiredTokenEndsItsStream(t *testing.T) {
	is := newIssuer(t)
	f := oidcFixture(t, is, func(c *OIDCConfig) { c.ClockSkew = time.Millisecond })
	c := is.claims("streamer")
	c.Expiry = jwt.NewNumericDate(time.Now().Add(2 * time.Second))
	f.created(t, "acme", "s1")
	req, _ := http.NewRequest("GET", f.url+"/v1/sessions/s1/events", nil)
	req.Header.Set("Authorization", "Bearer "+is.token(t, c))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("events = %d", resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body) // ends when the gateway closes the stream
	if err != nil || !strings.Contains(string(body), ": live") || !strings.Contains(string(body), "the token has expired") {
		t.Fatalf("stream of an expiring token: %v %q", err, body)
	}
	// A reconnect with the expired token is refused.
	if code, out := whoami(t, f, is.token(t, c)); code != http.StatusUnauthorized {
		t.Errorf("the expired token afterwards = %d %v, want 401", code, out)
	}
}
