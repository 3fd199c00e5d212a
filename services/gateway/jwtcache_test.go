package gateway

import (
	"fmt"
	"testing"
	"time"
)

// fakeClock is a settable now.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestJWTCacheKeepsUntilExpiry(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	c := newJWTCache(16, clk.now)
	p := Principal{ID: "oidc:alice", Tenant: "acme", Role: RoleMember, Expires: clk.t.Add(time.Minute)}
	c.put("token-a", p)

	if got, ok := c.get("token-a"); !ok || got != p {
		t.Fatalf("get after put = %+v, %v; want %+v, true", got, ok, p)
	}
	if _, ok := c.get("token-b"); ok {
		t.Fatal("a token never put was found")
	}
	clk.t = p.Expires.Add(-time.Nanosecond)
	if _, ok := c.get("token-a"); !ok {
		t.Fatal("the token was dropped before its expiry")
	}
	clk.t = p.Expires
	if _, ok := c.get("token-a"); ok {
		t.Fatal("the token was served at its expiry")
	}
}

func TestJWTCacheKeepsNoPrincipalWithoutExpiry(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	c := newJWTCache(16, clk.now)
	c.put("token-a", Principal{ID: "oidc:alice", Tenant: "acme", Role: RoleMember})
	if _, ok := c.get("token-a"); ok {
		t.Fatal("a principal without an expiry was cached")
	}
}

func TestJWTCacheIsBounded(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	const max = 64
	c := newJWTCache(max, clk.now)
	for i := range 10 * max {
		c.put(fmt.Sprintf("token-%d", i), Principal{ID: "oidc:x", Expires: clk.t.Add(time.Hour)})
		if n := len(c.mu.m); n > max {
			t.Fatalf("after %d puts the cache holds %d entries; the bound is %d", i+1, n, max)
		}
	}
	// The newest token is always kept.
	if _, ok := c.get(fmt.Sprintf("token-%d", 10*max-1)); !ok {
		t.Fatal("the token put last was evicted")
	}
	// Expired entries go first: with half expired, a full cache keeps every
	// live one.
	c = newJWTCache(max, clk.now)
	for i := range max {
		exp := clk.t.Add(time.Hour)
		if i%2 == 0 {
			exp = clk.t.Add(time.Second)
		}
		c.put(fmt.Sprintf("token-%d", i), Principal{ID: "oidc:x", Expires: exp})
	}
	clk.t = clk.t.Add(time.Minute)
	c.put("token-new", Principal{ID: "oidc:x", Expires: clk.t.Add(time.Hour)})
	for i := 1; i < max; i += 2 {
		if _, ok := c.get(fmt.Sprintf("token-%d", i)); !ok {
			t.Fatalf("live token-%d was evicted while expired entries were there", i)
		}
	}
}

func TestJWTCacheOffKeepsNothing(t *testing.T) {
	c := newJWTCache(0, time.Now)
	c.put("token-a", Principal{ID: "oidc:alice", Expires: time.Now().Add(time.Hour)})
	if _, ok := c.get("token-a"); ok {
		t.Fatal("a cache of size 0 kept a principal")
	}
}
