package gateway

import (
	"encoding/hex"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// BenchmarkAuthCheck measures what authenticating one request costs the
// gateway, per kind of credential: an API key (parse, SHA-256, a cache
// lookup, a constant-time compare) and an OIDC JWT (go-oidc: parse, an
// ES256 signature check against the cached JWKS, the claims). It reports
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

	for _, c := range []struct {
		name  string
		a     authenticator
		token string
	}{
		{"apikey", authenticator{keys: keys}, token.Reveal()},
		{"jwt", oidcAuth, jwtToken},
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
