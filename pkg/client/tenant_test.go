package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// WithTenant names the tenant on every request; an invalid one is refused
// before any request is made.
func TestWithTenant(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get(events.HeaderTenant)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"s1","status":"idle","leaf":null}`))
	}))
	defer srv.Close()
	cl, err := client.New(srv.URL, client.WithTenant("acme"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Session(context.Background(), "s1"); err != nil {
		t.Fatal(err)
	}
	if h := <-got; h != "acme" {
		t.Fatalf("the gateway saw tenant %q, want acme", h)
	}
	for _, bad := range []string{"", "Acme", "a.b"} {
		if _, err := client.New(srv.URL, client.WithTenant(bad)); err == nil {
			t.Errorf("WithTenant(%q) accepted", bad)
		}
	}
}
