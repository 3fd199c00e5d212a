package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

func TestTenantApprovalsOfAnotherTenantAreMissing(t *testing.T) {
	f := newFixture(t, nil)
	if code, out := f.do(t, "PUT", "/v1/tenants/acme/approvals", `{"tools":{"bash":"ask"}}`); code != 200 {
		t.Fatalf("admin PUT = %d %v", code, out)
	}
	member, _ := f.newKey(t, f.admin, RoleMember, "beta")
	tadmin, _ := f.newKey(t, f.admin, RoleTenantAdmin, "beta")
	bearer := func(s secret.Secret) string { return "Bearer " + s.Reveal() }
	if code, out, _ := f.call(t, bearer(tadmin), "PUT", "/v1/tenants/beta/approvals", `{"tools":{"*":"ask"},"expiresAfterMs":60000}`); code != 200 {
		t.Fatalf("own PUT = %d %v", code, out)
	}
	if code, out, _ := f.call(t, bearer(member), "GET", "/v1/tenants/beta/approvals", ""); code != 200 || !strings.Contains(toJSON(out), `"*":"ask"`) {
		t.Fatalf("own GET = %d %v", code, out)
	}
	if code, _, _ := f.call(t, bearer(member), "PUT", "/v1/tenants/beta/approvals", `{"tools":{}}`); code != 403 {
		t.Fatalf("a member's PUT = %d, want 403", code)
	}
	for _, bad := range []string{`{"tools":{"bash":"maybe"}}`, `{"tools":{"a b":"ask"}}`, `{"tools":{},"expiresAfterMs":-1}`, `{"rules":{}}`, `[1]`} {
		if code, out, _ := f.call(t, bearer(tadmin), "PUT", "/v1/tenants/beta/approvals", bad); code != 400 {
			t.Errorf("PUT %s = %d %v, want 400", bad, code, out)
		}
	}
	_, missing, _ := f.call(t, bearer(member), "GET", "/v1/tenants/nope/approvals", "")
	for _, c := range []struct {
		who          secret.Secret
		method, body string
	}{{member, "GET", ""}, {tadmin, "PUT", `{"tools":{}}`}} {
		code, out, _ := f.call(t, bearer(c.who), c.method, "/v1/tenants/acme/approvals", c.body)
		if code != 404 || strings.Replace(errMsg(out), "acme", "nope", 1) != errMsg(missing) {
			t.Errorf("%s acme's approvals = %d %v, want the 404 of a missing tenant", c.method, code, out)
		}
	}
	if _, out := f.do(t, "GET", "/v1/tenants/acme/approvals", ""); !strings.Contains(toJSON(out), `"bash":"ask"`) {
		t.Errorf("a refused PUT changed acme's default: %v", out)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
