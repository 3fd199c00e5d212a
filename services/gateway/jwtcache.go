package gateway

import (
	"crypto/sha256"
	"sync"
	"time"
)

// jwtCache keeps the principals of verified JWTs, keyed by the SHA-256 of
// the token, until each token's expiry (its exp plus the clock skew the
// verifier allows: Principal.Expires). It changes nothing of what a token
// may do: a JWT is valid until it expires and Cairn has no revocation
// list for JWTs, so a cached answer is the answer go-oidc would give again,
// only without the signature check. Only successes are kept; a refused
// token is checked again each time. The token itself is never stored.
//
// # Concurrency
//
// Safe for concurrent use; one mutex guards the map (a lookup is a hash
// and a map read).
//
// # Bounds
//
// At most max entries. A put into a full cache first drops the expired
// entries and, if none had expired, an arbitrary half, so a client minting
// a new token per request costs memory bounded by max and never more than
// the signature checks it already costs.
type jwtCache struct {
	max int
	now func() time.Time
	mu  struct {
		sync.Mutex
		m map[[sha256.Size]byte]Principal
	}
}

// jwtCacheSize bounds the cache: 8,192 principals of ~150 bytes.
const jwtCacheSize = 8192

func newJWTCache(max int, now func() time.Time) *jwtCache {
	c := &jwtCache{max: max, now: now}
	c.mu.m = make(map[[sha256.Size]byte]Principal)
	return c
}

// get returns the principal of token if it was put and has not expired.
func (c *jwtCache) get(token string) (Principal, bool) {
	k := sha256.Sum256([]byte(token))
	c.mu.Lock()
	p, ok := c.mu.m[k]
	c.mu.Unlock()
	if !ok || !c.now().Before(p.Expires) {
		return Principal{}, false
	}
	return p, true
}

// put keeps p for token until p.Expires; a principal without an expiry is
// not kept, nor anything by a cache of max 0 (caching off).
func (c *jwtCache) put(token string, p Principal) {
	if p.Expires.IsZero() || c.max <= 0 {
		return
	}
	k := sha256.Sum256([]byte(token))
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mu.m) >= c.max {
		c.evictLocked(now)
	}
	c.mu.m[k] = p
}

// evictLocked drops every expired entry, or half the entries when none
// has expired.
func (c *jwtCache) evictLocked(now time.Time) {
	n := len(c.mu.m)
	for k, p := range c.mu.m {
		if !now.Before(p.Expires) {
			delete(c.mu.m, k)
		}
	}
	if len(c.mu.m) < n {
		return
	}
	for k := range c.mu.m {
		if len(c.mu.m) <= c.max/2 {
			return
		}
		delete(c.mu.m, k)
	}
}
