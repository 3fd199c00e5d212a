package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
)

// Keys through the SDK: an admin creates a member key; the member works
// with it, may not make keys, and fails once the key is revoked.
func TestKeys(t *testing.T) {
	p := newPlatform(t)
	admin := newClient(t, p.URL)
	ctx := ctxFor(t)
	k, err := admin.CreateKey(ctx, client.CreateKey{Role: "member", Name: "sdk test"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.Token, "cairn_"+k.ID+"_") || k.Tenant != "default" || k.Role != "member" || !strings.HasPrefix(k.CreatedBy, "key:") {
		t.Fatalf("created key %+v", k)
	}
	member, err := client.New(p.URL, client.WithToken(k.Token))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := member.CreateSession(ctx, client.CreateSession{ID: "k1"}, client.WaitApplied()); err != nil {
		t.Fatalf("a member creates a session: %v", err)
	}
	if _, err := member.CreateKey(ctx, client.CreateKey{Role: "viewer"}); !errors.Is(err, client.ErrForbidden) {
		t.Errorf("a member creates a key: %v, want ErrForbidden", err)
	}
	keys, err := admin.ListKeys(ctx, "")
	if err != nil || len(keys) != 2 {
		t.Fatalf("list = %v (%v), want the bootstrap key and the member's", keys, err)
	}
	for _, l := range keys {
		if l.Token != "" {
			t.Errorf("the list shows a token: %+v", l)
		}
	}
	if r, err := admin.RevokeKey(ctx, k.ID); err != nil || r.RevokedAt == nil {
		t.Fatalf("revoke = %+v, %v", r, err)
	}
	_, err = member.ListSessions(ctx, client.ListSessions{})
	var ae *client.Error
	if !errors.Is(err, client.ErrUnauthenticated) || !errors.As(err, &ae) || ae.Code != "unauthenticated" || strings.Contains(err.Error(), k.Token) {
		t.Errorf("a revoked key: %v, want ErrUnauthenticated without the token", err)
	}
	anon, _ := client.New(p.URL)
	if _, err := anon.ListSessions(ctx, client.ListSessions{}); !errors.Is(err, client.ErrUnauthenticated) {
		t.Errorf("no token: %v, want ErrUnauthenticated", err)
	}
	if _, err := client.New(p.URL, client.WithToken("two words")); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("a token with a space: %v, want ErrInvalid", err)
	}
}
