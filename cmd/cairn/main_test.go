package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/internal/mcptest"
)

// runCairn runs the binary's run function with args and returns its exit
// status, stdout and stderr.
func runCairn(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestMain gives the tests, and every cairn process they start, a config
// directory of their own, where `cairn up` records its admin key as it
// does for a user (serverkeys.go), and sends that key with every request
// of http.DefaultTransport to a platform that recorded one: the one helper
// through which the tests' own HTTP calls carry the platform's admin key.
//
// Started as CAIRN_TEST_CHILD=mcpserver (by a toolrunner an e2e test
// starts with --mcp), the binary is internal/mcptest's MCP server instead.
func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_TEST_CHILD") == "mcpserver" {
		os.Exit(mcptest.Serve())
	}
	dir, err := os.MkdirTemp("", "cairn-test-config-")
	if err != nil {
		panic(err)
	}
	if err := os.Setenv("XDG_CONFIG_HOME", dir); err != nil {
		panic(err)
	}
	if err := os.Unsetenv("CAIRN_TOKEN"); err != nil {
		panic(err)
	}
	http.DefaultTransport = recordedKeys{http.DefaultTransport}
	code := m.Run()
	if err := os.RemoveAll(dir); err != nil && code == 0 {
		code = 1
	}
	os.Exit(code)
}

// recordedKeys adds the key recorded for a request's server when the
// request carries no Authorization of its own.
type recordedKeys struct{ next http.RoundTripper }

func (rk recordedKeys) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") == "" && strings.HasPrefix(r.URL.Path, "/v1/") {
		if key, err := rememberedToken(r.URL.Scheme + "://" + r.URL.Host); err == nil && key != "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+key.Reveal())
		}
	}
	return rk.next.RoundTrip(r)
}

// recordPlatform records an in-process platform's admin key for its URL,
// as `cairn up` does, so client commands and the tests' requests use it.
func recordPlatform(t testing.TB, p *platform) {
	t.Helper()
	if err := rememberServer(p.URL, p.KeyFile); err != nil {
		t.Fatal(err)
	}
}
