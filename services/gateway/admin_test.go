package gateway

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// The admin routes reach the projector's handler with their method, path
// and body; without a projector they answer 503; other methods are refused.
func TestAdminRoutesGoToTheProjector(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	projector := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"state":"rebuilding"}`)) // a fake projector: a failed write fails the gateway's call
	})
	f := newFixture(t, func(c *Config) { c.Queries = projector })
	for _, p := range adminPatterns {
		method, path, _ := strings.Cut(p, " ")
		if code, out := f.do(t, method, path, ""); code != http.StatusAccepted || out["state"] != "rebuilding" {
			t.Errorf("%s = %d %v, want the projector's answer", p, code, out)
		}
	}
	if code, _ := f.do(t, "DELETE", "/v1/admin/projector/rebuild", ""); code != http.StatusMethodNotAllowed && code != http.StatusNotFound {
		t.Errorf("DELETE = %d, want 405 or 404", code)
	}
	mu.Lock()
	if len(seen) != len(adminPatterns) {
		t.Errorf("the projector saw %v, want %v", seen, adminPatterns)
	}
	for i, p := range adminPatterns {
		if i < len(seen) && seen[i] != p {
			t.Errorf("request %d reached the projector as %q, want %q", i, seen[i], p)
		}
	}
	mu.Unlock()

	bare := newFixture(t, nil)
	for _, p := range adminPatterns {
		method, path, _ := strings.Cut(p, " ")
		if code, out := bare.do(t, method, path, ""); code != http.StatusServiceUnavailable || errMsg(out) == "" {
			t.Errorf("%s without a projector = %d %v, want 503 with a reason", p, code, out)
		}
	}
}
