package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/toolbus"
)

func TestToolrunnerCommandServesAndStopsCleanly(t *testing.T) {
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv.Server)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"toolrunner", "--nats", srv.ClientURL(), "--workspace-root", t.TempDir(),
			"--pool", "cmdtest", "--concurrency", "2"}, nil, &stdout, &stderr)
	}()
	bus, err := toolbus.New(nc, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 30*time.Second, "the built-in tools registered", func() error {
		r, err := bus.Lookup(ctx, "bash")
		if err == nil && r.Pool == "cmdtest" {
			return nil
		}
		return withStderr{err, &stderr}
	})
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", c, stderr.String())
	}
}

func TestToolrunnerCommandNeedsAWorkspaceRoot(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if c := run(context.Background(), []string{"toolrunner", "--nats", "nats://127.0.0.1:1"}, nil, &stdout, &stderr); c != 2 {
		t.Fatalf("exit status %d, want 2 (usage); stderr: %s", c, stderr.String())
	}
	if !bytes.Contains(stderr.Bytes(), []byte("workspaceRoot: is required")) {
		t.Errorf("stderr = %q, want it to name the workspace root", stderr.String())
	}
}

// withStderr is an error that shows a command's stderr, read only when the
// error is printed (the command may still be writing it until then).
type withStderr struct {
	err    error
	stderr *bytes.Buffer
}

func (e withStderr) Error() string { return fmt.Sprintf("%v; stderr:\n%s", e.err, e.stderr.String()) }

// --tenants restricts the pool: the registry records the tenants, so the
// orchestrator dispatches no other tenant's call to it (and the worker
// refuses one that arrives anyway, TestPoolRestrictedToTenants in
// pkg/toolbus); a name that is no tenant is a usage error naming it.
func TestToolrunnerCommandRestrictsItsPoolToTenants(t *testing.T) {
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv.Server)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"toolrunner", "--nats", srv.ClientURL(), "--workspace-root", t.TempDir(),
			"--pool", "tenanted", "--tenants", "acme, beta", "--sandbox", "best-effort"}, nil, &stdout, &stderr)
	}()
	bus, err := toolbus.New(nc, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 30*time.Second, "the pool registered for acme and beta", func() error {
		r, err := bus.Lookup(ctx, "bash")
		if err != nil {
			return withStderr{err, &stderr}
		}
		if r.Pool != "tenanted" || !r.Serves("acme") || !r.Serves("beta") || r.Serves("gamma") {
			return fmt.Errorf("registration %+v, want pool tenanted for acme and beta only", r)
		}
		return nil
	})
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", c, stderr.String())
	}

	stderr.Reset()
	if c := run(context.Background(), []string{"toolrunner", "--nats", "nats://127.0.0.1:1", "--workspace-root", t.TempDir(),
		"--tenants", "acme,Not_A_Tenant"}, nil, &stdout, &stderr); c != 2 {
		t.Fatalf("exit status %d, want 2 (usage); stderr: %s", c, stderr.String())
	}
	if !bytes.Contains(stderr.Bytes(), []byte("tenants[1]")) {
		t.Errorf("stderr = %q, want it to name tenants[1]", stderr.String())
	}
}

// --sandbox-allow-hosts refuses an entry it cannot honour, naming it, on
// both commands that run a toolrunner.
func TestSandboxAllowHostsFlagRefusesBadEntries(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"toolrunner", "--nats", "nats://127.0.0.1:1", "--workspace-root", t.TempDir(), "--sandbox-allow-hosts", "*.example.com"},
			`--sandbox-allow-hosts: allowHosts entry "*.example.com": wildcards are not supported`},
		{[]string{"toolrunner", "--nats", "nats://127.0.0.1:1", "--workspace-root", t.TempDir(), "--sandbox-allow-hosts", "example.com",
			"--sandbox-allow-ports", "443"}, "exclude each other"},
		{[]string{"up", "--data", t.TempDir(), "--sandbox-allow-hosts", "https://example.com"}, "without scheme"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), c.args, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}
