package gateway

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/llm"
)

type oneProvider string

func (p oneProvider) Resolve(ref string) (llm.Provider, llm.Model, error) {
	if !strings.HasPrefix(ref, string(p)+"/") {
		return nil, llm.Model{}, errors.New("unknown provider")
	}
	return nil, llm.Model{}, nil
}

// What the gateway can check it refuses at once; what it cannot (no root,
// no registry) it leaves to the orchestrator, which refuses on the record.
func TestGatewayChecksWhatItKnows(t *testing.T) {
	root := t.TempDir()
	knows := newFixture(t, func(c *Config) { c.WorkspaceRoot, c.Models = root, oneProvider("scripted") })
	alone := newFixture(t, nil)
	for _, c := range []struct {
		f          *fixture
		path, body string
		code       int
		msg        string
	}{
		{knows, "/v1/sessions", `{"workspace":"` + root + `/default/proj"}`, 201, ""},
		{knows, "/v1/sessions", `{"workspace":"/etc"}`, 400, `workspace: "/etc" is outside the tenant's workspace root`},
		{knows, "/v1/sessions", `{"model":"other/x"}`, 400, `model: "other/x" cannot be used: unknown provider`},
		{knows, "/v1/sessions", `{"model":"scripted/x"}`, 201, ""},
		{knows, "/v1/sessions/s1/commands", `{"type":"set_model","model":"other/x"}`, 400, `model: "other/x" cannot be used`},
		{alone, "/v1/sessions", `{"workspace":"/etc"}`, 201, ""},
		{alone, "/v1/sessions", `{"workspace":"../up"}`, 400, `workspace: "../up" is outside the tenant's workspace root`},
		{alone, "/v1/sessions", `{"model":"other/x"}`, 201, ""},
	} {
		code, out := c.f.do(t, "POST", c.path, c.body)
		if code != c.code || !strings.Contains(errMsg(out), c.msg) {
			t.Errorf("%s %s = %d %q; want %d naming %q", c.path, c.body, code, errMsg(out), c.code, c.msg)
		}
	}
}
