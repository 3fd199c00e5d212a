package main

import (
	"os"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/mcptool"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/resources"
	"github.com/spf13/cobra"
)

// mcpFlags are the MCP flags of `cairn toolrunner` and `cairn up`.
type mcpFlags struct {
	servers, idempotent, headers, tokens []string
	timeout                              time.Duration
}

func addMCPFlags(c *cobra.Command) *mcpFlags {
	m := &mcpFlags{}
	f := c.Flags()
	f.StringArrayVar(&m.servers, "mcp", nil, "serve an MCP server's tools as mcp__NAME__TOOL: NAME=COMMAND ARGS... (stdio; words split on spaces, '...' and \"...\" group) or NAME=URL (streamable HTTP); repeatable")
	f.StringArrayVar(&m.idempotent, "mcp-idempotent", nil, "NAME: the MCP server's tools are idempotent (run again after a crash); default not (repeatable)")
	f.StringArrayVar(&m.headers, "mcp-header", nil, "NAME=HEADER:VALUE sent to the HTTP MCP server NAME (repeatable; the value is never logged)")
	f.StringArrayVar(&m.tokens, "mcp-token-env", nil, "NAME=ENVVAR: send Authorization: Bearer <the value of ENVVAR> to the HTTP MCP server NAME (repeatable)")
	f.DurationVar(&m.timeout, "mcp-timeout", mcptool.DefaultCallTimeout, "time-out of one MCP tool call")
	return m
}

// parse builds the servers the flags describe; a problem is a usage error
// naming the flag.
func (m *mcpFlags) parse() ([]mcptool.Server, error) {
	var out []mcptool.Server
	idx := map[string]int{}
	for _, s := range m.servers {
		name, target, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(target) == "" {
			return nil, usagef("--mcp %q: NAME=COMMAND or NAME=URL expected", s)
		}
		if _, dup := idx[name]; dup {
			return nil, usagef("--mcp: server %q is given twice", name)
		}
		srv := mcptool.Server{Name: name, CallTimeout: m.timeout}
		if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
			srv.URL = target
		} else {
			srv.Command = resources.ParseCommandArgs(target)
		}
		idx[name] = len(out)
		out = append(out, srv)
	}
	get := func(flag, name string) (*mcptool.Server, error) {
		i, ok := idx[name]
		if !ok {
			return nil, usagef("%s: no --mcp server is named %q", flag, name)
		}
		return &out[i], nil
	}
	for _, name := range m.idempotent {
		srv, err := get("--mcp-idempotent", name)
		if err != nil {
			return nil, err
		}
		srv.Idempotent = true
	}
	setHeader := func(srv *mcptool.Server, k, v string) {
		if srv.Headers == nil {
			srv.Headers = map[string]secret.Secret{}
		}
		srv.Headers[k] = secret.Secret(v)
	}
	for _, h := range m.headers {
		name, hv, ok := strings.Cut(h, "=")
		k, v, ok2 := strings.Cut(hv, ":")
		if !ok || !ok2 {
			return nil, usagef("--mcp-header: NAME=HEADER:VALUE expected (for server %q)", name)
		}
		srv, err := get("--mcp-header", name)
		if err != nil {
			return nil, err
		}
		setHeader(srv, strings.TrimSpace(k), strings.TrimSpace(v))
	}
	for _, t := range m.tokens {
		name, env, ok := strings.Cut(t, "=")
		if !ok || env == "" {
			return nil, usagef("--mcp-token-env %q: NAME=ENVVAR expected", t)
		}
		srv, err := get("--mcp-token-env", name)
		if err != nil {
			return nil, err
		}
		tok := os.Getenv(env)
		if tok == "" {
			return nil, usagef("--mcp-token-env: the environment variable %s (for server %q) is empty", env, name)
		}
		setHeader(srv, "Authorization", "Bearer "+tok)
	}
	for _, srv := range out {
		if err := srv.Validate(); err != nil {
			return nil, usagef("--mcp: %v", err)
		}
	}
	return out, nil
}
