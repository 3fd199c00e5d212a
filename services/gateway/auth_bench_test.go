package gateway

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/go-jose/go-jose/v4/jwt"
)

// BenchmarkAuthCheck measures what authenticating one request costs the
// gateway, per kind of credential: an API key (parse, SHA-256, a cache
// lookup, a constant-time compare) and an OIDC JWT (go-oidc: parse, an
// ES256 signature check against the cached JWKS, the claims; "jwt" is a
// token seen before, answered from the verified-token cache, and
// "jwt-uncached" the signature check every new token pays). It reports
// the median and 99th percentile of single checks besides the mean.
func BenchmarkAuthCheck(b *testing.B) {
	keys := newKeyStore(nil, events.Names{})
	token, id, err := NewKey()
	if err != nil {
		b.Fatal(err)
	}
	_, hash, _ := ParseKey(token)
	keys.mu.Lock()
	keys.putLocked(KeyRecord{ID: id, Tenant: DefaultTenant, Role: RoleMember, Hash: hex.EncodeToString(hash[:])}, 1)
	keys.mu.Unlock()
	close(keys.loaded)

	is := newIssuer(b)
	jwtToken := is.token(b, is.claims("alice"))
	oidcAuth := authenticator{keys: keys, oidc: newOIDCVerifier(OIDCConfig{Issuer: is.srv.URL, Audience: "cairn", HTTPClient: is.srv.Client()})}
	uncached := authenticator{keys: keys, oidc: newOIDCVerifier(OIDCConfig{Issuer: is.srv.URL, Audience: "cairn", HTTPClient: is.srv.Client()})}
	uncached.oidc.cache = newJWTCache(0, time.Now) // every check verifies the signature

	for _, c := range []struct {
		name  string
		a     authenticator
		token string
	}{
		{"apikey", authenticator{keys: keys}, token.Reveal()},
		{"jwt", oidcAuth, jwtToken},
		{"jwt-uncached", uncached, jwtToken},
	} {
		b.Run(c.name, func(b *testing.B) {
			req, _ := http.NewRequest("GET", "http://gateway/v1/sessions", nil)
			req.Header.Set("Authorization", "Bearer "+c.token)
			if _, err := c.a.authenticate(req); err != nil { // warms the JWKS cache
				b.Fatal(err)
			}
			durs := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				if _, err := c.a.authenticate(req); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(durs)
			b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkAuthRequest measures whole requests to a real gateway over
// loopback HTTP and a real NATS: POST /v1/sessions/{id}/commands (an
// abort: decoded, validated, published, acknowledged by JetStream), with
// no authentication (the same handler with its principal set, the
// gateway's guard left out), with an API key and with an OIDC JWT. The
// difference between "none" and the others is what authentication adds
// to a request; it reports the median and 99th percentile besides the
// mean.
func BenchmarkAuthRequest(b *testing.B) {
	is := newIssuer(b)
	f := newFixture(b, func(c *Config) {
		c.OIDC = OIDCConfig{Issuer: is.srv.URL, Audience: "cairn", HTTPClient: is.srv.Client()}
	})
	c := is.claims("bench")
	c.Expiry = jwt.NewNumericDate(time.Now().Add(time.Hour))
	jwtToken := is.token(b, c)

	// No authentication: the route's handler as routes() wires it, less
	// the guard, with a principal of the JWT's tenant.
	const pattern = "POST /v1/sessions/{id}/commands"
	p := Principal{ID: "bench", Tenant: "acme", Role: RoleMember}
	mux := http.NewServeMux()
	mux.HandleFunc(pattern, f.g.instrument(pattern, "command", true, func(w http.ResponseWriter, r *http.Request) {
		f.g.postCommand(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}))
	open := httptest.NewServer(mux)
	b.Cleanup(open.Close)

	for _, c := range []struct{ name, url, auth string }{
		{"none", open.URL, ""},
		{"apikey", f.url, "Bearer " + f.admin.Reveal()},
		{"jwt", f.url, "Bearer " + jwtToken},
	} {
		b.Run(c.name, func(b *testing.B) {
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer hc.CloseIdleConnections()
			do := func() {
				req, _ := http.NewRequest("POST", c.url+"/v1/sessions/s1/commands", strings.NewReader(`{"type":"abort"}`))
				if c.auth != "" {
					req.Header.Set("Authorization", c.auth)
				}
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					b.Fatalf("%s: status %d", c.name, resp.StatusCode)
				}
			}
			do() // a connection open, the JWKS fetched
			durs := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				do()
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(durs)
			b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}
