package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if code, _, stderr := runCairn(t, "healthcheck", srv.URL+"/readyz"); code != 0 {
		t.Fatalf("ready server: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCairn(t, "healthcheck", srv.URL+"/other"); code != 1 || !strings.Contains(stderr, "503") {
		t.Fatalf("unready server: exit %d, %q; want 1 naming the status", code, stderr)
	}
	for _, bad := range []string{"file:///etc/passwd", "https://", "not a url"} {
		if code, _, stderr := runCairn(t, "healthcheck", bad); code != 2 || !strings.Contains(stderr, "http://") {
			t.Errorf("%q: exit %d, %q; want a usage error", bad, code, stderr)
		}
	}
}
