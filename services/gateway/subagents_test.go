package gateway

import (
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

func TestTenantSubagentLimits(t *testing.T) {
	f := newFixture(t, nil)
	if code, out := f.do(t, "GET", "/v1/tenants/acme/subagents", ""); code != 200 || toJSON(out) != `{"maxDepth":3,"maxFanOut":20}` {
		t.Fatalf("defaults = %d %v", code, out)
	}
	member, _ := f.newKey(t, f.admin, RoleMember, "beta")
	tadmin, _ := f.newKey(t, f.admin, RoleTenantAdmin, "beta")
	bearer := func(s secret.Secret) string { return "Bearer " + s.Reveal() }
	if code, out, _ := f.call(t, bearer(tadmin), "PUT", "/v1/tenants/beta/subagents", `{"maxDepth":1,"maxFanOut":4}`); code != 200 {
		t.Fatalf("own PUT = %d %v", code, out)
	}
	if code, out, _ := f.call(t, bearer(member), "GET", "/v1/tenants/beta/subagents", ""); code != 200 || toJSON(out) != `{"maxDepth":1,"maxFanOut":4}` {
		t.Fatalf("own GET = %d %v", code, out)
	}
	if code, _, _ := f.call(t, bearer(member), "PUT", "/v1/tenants/beta/subagents", `{"maxDepth":1,"maxFanOut":4}`); code != 403 {
		t.Fatalf("a member's PUT = %d, want 403", code)
	}
	for bad, field := range map[string]string{`{"maxDepth":-1,"maxFanOut":4}`: "maxDepth", `{"maxDepth":99,"maxFanOut":4}`: "maxDepth",
		`{"maxDepth":1}`: "maxFanOut", `{"maxDepth":1,"maxFanOut":4,"x":1}`: "x", `{"maxDepth":"1","maxFanOut":4}`: "maxDepth", `[1]`: "object"} {
		code, out, _ := f.call(t, bearer(tadmin), "PUT", "/v1/tenants/beta/subagents", bad)
		if code != 400 || !strings.Contains(errMsg(out), field) {
			t.Errorf("PUT %s = %d %v, want 400 naming %s", bad, code, out, field)
		}
	}
	if code, _, _ := f.call(t, bearer(tadmin), "PUT", "/v1/tenants/acme/subagents", `{"maxDepth":1,"maxFanOut":4}`); code != 404 {
		t.Errorf("another tenant's PUT = %d, want 404", code)
	}
}

// What only orchestrators send for sub-agents, a client may not.
func TestClientsCannotForgeSubagentCommands(t *testing.T) {
	f := newFixture(t, nil)
	child := events.ChildSessionID("p1", "k1")
	for _, c := range []struct{ path, body, field string }{
		{"/v1/sessions/p1/commands", `{"type":"task_result","toolCallId":"k1","childSessionId":"` + child + `"}`, "task_result"},
		{"/v1/sessions/p1/commands", `{"id":"task-result-x","type":"abort"}`, "reserved"},
		{"/v1/sessions/" + child + "/commands", `{"type":"create","parentSession":"p1","parentToolCallId":"k1","taskDepth":1}`, "parentToolCallId"},
		{"/v1/sessions", `{"id":"` + child + `"}`, "reserved for sub-agents"},
	} {
		code, out := f.do(t, "POST", c.path, c.body)
		if code != 400 || !strings.Contains(errMsg(out), c.field) {
			t.Errorf("POST %s %s = %d %v, want 400 naming %s", c.path, c.body, code, out, c.field)
		}
	}
}
