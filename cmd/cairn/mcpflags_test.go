package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestMCPFlags(t *testing.T) {
	t.Setenv("MCP_TOK", "tok-123")
	c := &cobra.Command{}
	m := addMCPFlags(c)
	err := c.ParseFlags([]string{"--mcp", `files=npx -y "@mcp/server files" /data`, "--mcp", "web=https://mcp.example/mcp",
		"--mcp-idempotent", "files", "--mcp-token-env", "web=MCP_TOK", "--mcp-header", "web=X-Team: blue"})
	if err != nil {
		t.Fatal(err)
	}
	srvs, err := m.parse()
	if err != nil {
		t.Fatal(err)
	}
	if len(srvs) != 2 || strings.Join(srvs[0].Command, "|") != "npx|-y|@mcp/server files|/data" || !srvs[0].Idempotent ||
		srvs[1].URL != "https://mcp.example/mcp" || srvs[1].Idempotent ||
		string(srvs[1].Headers["Authorization"]) != "Bearer tok-123" || string(srvs[1].Headers["X-Team"]) != "blue" {
		t.Fatalf("%+v", srvs)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--mcp", "nocommand"}, "NAME=COMMAND or NAME=URL expected"},
		{[]string{"--mcp", "a=x", "--mcp", "a=y"}, `server "a" is given twice`},
		{[]string{"--mcp", "a=x", "--mcp-idempotent", "b"}, `--mcp-idempotent: no --mcp server is named "b"`},
		{[]string{"--mcp", "a_b=x"}, `mcp server name "a_b"`},
		{[]string{"--mcp", "a=http://h/mcp", "--mcp-token-env", "a=MCP_UNSET_VAR"}, "MCP_UNSET_VAR (for server \"a\") is empty"},
		{[]string{"--mcp", "a=x", "--mcp-header", "a=X:1"}, "headers are for HTTP servers only"},
	} {
		c := &cobra.Command{}
		m := addMCPFlags(c)
		if err := c.ParseFlags(bad.args); err != nil {
			t.Fatal(err)
		}
		if _, err := m.parse(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want %q", bad.args, err, bad.want)
		}
	}
}
