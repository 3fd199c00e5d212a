package toolrunner_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/cairn-agents/cairn/services/toolrunner"
)

func TestBuiltinToolsOverTheBus(t *testing.T) {
	c := newCluster(t)
	r, err := toolrunner.New(toolrunner.Config{NATSURL: c.url, WorkspaceRoot: c.root, Pool: "test",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer kittest.Run(t, context.Background(), "toolrunner", r.Run)()
	c.dispatch(t, "s1", "w", "write", `{"path":"notes/a.txt","content":"hello cairn\n"}`)
	c.waitResults(t, 1)
	c.dispatch(t, "s1", "r", "read", `{"path":"notes/a.txt"}`)
	c.dispatch(t, "s1", "esc", "read", `{"path":"../../etc/passwd"}`)
	got := c.waitResults(t, 3)
	if rs := got["w"]; len(rs) != 1 || rs[0].IsError {
		t.Errorf("write: %+v", rs)
	}
	if rs := got["r"]; len(rs) != 1 || rs[0].IsError || !strings.Contains(rs[0].Content[0].Text, "hello cairn") {
		t.Errorf("read: %+v", rs)
	}
	if rs := got["esc"]; len(rs) != 1 || !rs[0].IsError {
		t.Errorf("read outside the workspace: %+v, want an error result", rs)
	}
	regs, err := c.bus.Tools(context.Background())
	if err != nil || len(regs) != 7 {
		t.Errorf("registry: %d tools, %v; want the 7 built-ins", len(regs), err)
	}
}

func TestConfigValidateNamesTheField(t *testing.T) {
	for field, cfg := range map[string]toolrunner.Config{
		"workspaceRoot": {},
		"pool":          {WorkspaceRoot: t.TempDir(), Pool: "a.b"},
		"concurrency":   {WorkspaceRoot: t.TempDir(), Concurrency: -1},
		"ackWait":       {WorkspaceRoot: t.TempDir(), AckWait: 1},
		"replicas":      {WorkspaceRoot: t.TempDir(), Replicas: 7},
		"mcpOnly":       {WorkspaceRoot: t.TempDir(), MCPOnly: true}, // and no MCP server
	} {
		err := cfg.Validate()
		var fe *events.FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("Validate() = %v, want a field error on %s", err, field)
		}
	}
	if err := (toolrunner.Config{WorkspaceRoot: t.TempDir()}).Validate(); err != nil {
		t.Errorf("zero config with a root: %v", err)
	}
}

func TestRunRefusesToStartWithoutWhatItNeeds(t *testing.T) {
	srv := natstest.RunServer(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := toolrunner.New(toolrunner.Config{NATSURL: srv.ClientURL(), WorkspaceRoot: t.TempDir(), CheckOnly: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); !errors.Is(err, toolbus.ErrNotProvisioned) {
		t.Errorf("Run with --check-only on an empty server = %v, want ErrNotProvisioned", err)
	}
	r, err = toolrunner.New(toolrunner.Config{NATSURL: "nats://127.0.0.1:1", WorkspaceRoot: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "nats://127.0.0.1:1") {
		t.Errorf("Run against no server = %v, want an error naming the URL", err)
	}
}
