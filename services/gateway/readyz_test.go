package gateway

import (
	"net/http"
	"testing"
)

// /readyz carries the fields Config.ReadyzFields adds (under `cairn up`,
// the embedded toolrunner's sandbox level), and ready stays the gateway's.
func TestReadyzCarriesTheAddedFields(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.ReadyzFields = func() map[string]any {
			return map[string]any{"sandbox": "best-effort", "sandboxMissing": []string{"user namespaces"}, "ready": false}
		}
	})
	code, body := f.do(t, "GET", "/readyz", "")
	if code != http.StatusOK || body["ready"] != true || body["sandbox"] != "best-effort" {
		t.Fatalf("/readyz: %d %v, want 200 ready with the sandbox level", code, body)
	}
	if m, _ := body["sandboxMissing"].([]any); len(m) != 1 || m[0] != "user namespaces" {
		t.Fatalf("/readyz sandboxMissing: %v", body["sandboxMissing"])
	}
}
