package test

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// TestChartMCPServers: toolrunner.mcp becomes --mcp flags of the pool's
// toolrunners, tokens come from Secrets through the environment (never in
// the args), and a server without exactly one of command and url, or with
// a bad name, is refused at render time.
func TestChartMCPServers(t *testing.T) {
	ch, err := loader.Load("..")
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"toolrunner": map[string]any{"mcp": []any{
		map[string]any{"name": "docs", "url": "http://docs-mcp:8000/mcp", "idempotent": true,
			"tokenSecret": map[string]any{"name": "docs-mcp", "key": "token"}},
		map[string]any{"name": "git", "command": []any{"mcp-server-git", "--repository", "/work spaces"}},
	}}}
	r := decodeDocs(t, renderValues(t, ch, vals))
	c := r.deployments["toolrunner"].Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, "|")
	for _, want := range []string{"|--mcp|docs=http://docs-mcp:8000/mcp|--mcp-idempotent|docs|--mcp-token-env|docs=CAIRN_MCP_TOKEN_0",
		`|--mcp|git=mcp-server-git --repository "/work spaces"`} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--mcp-idempotent|git") {
		t.Errorf("git is not idempotent: %q", args)
	}
	var found bool
	for _, e := range c.Env {
		if e.Name == "CAIRN_MCP_TOKEN_0" {
			found = e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "docs-mcp" && e.ValueFrom.SecretKeyRef.Key == "token"
		}
	}
	if !found {
		t.Errorf("no CAIRN_MCP_TOKEN_0 from the Secret: %+v", c.Env)
	}
	for _, bad := range []struct {
		srv  map[string]any
		want string
	}{
		{map[string]any{"name": "a_b", "url": "http://x"}, `name "a_b": 1-32 characters`},
		{map[string]any{"name": "both", "url": "http://x", "command": []any{"x"}}, "give a command or a url, one of them"},
		{map[string]any{"name": "none"}, "give a command or a url, one of them"},
	} {
		_, err := tryRender(ch, map[string]any{"toolrunner": map[string]any{"mcp": []any{bad.srv}}})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want %q", bad.srv, err, bad.want)
		}
	}
}
