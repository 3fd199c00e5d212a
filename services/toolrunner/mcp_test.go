package toolrunner_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/mcptool"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/cairn-agents/cairn/services/toolrunner"
)

// An MCP server's tools are registered for the pool and answer calls over
// the bus like any tool; tools it adds later are registered too.
func TestMCPToolsOverTheBus(t *testing.T) {
	c := newCluster(t)
	cmd := kittest.Command("mcpserver")
	r, err := toolrunner.New(toolrunner.Config{NATSURL: c.url, WorkspaceRoot: c.root, Pool: "test",
		Tools: []tool.Tool{noopTool{}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		MCP: []mcptool.Server{{Name: "fs", Command: cmd.Args, Env: []string{"CAIRN_TEST_CHILD=mcpserver"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer kittest.Run(t, context.Background(), "toolrunner", r.Run)()
	kittest.Eventually(t, 20*time.Second, "the runner is ready", r.Ready)
	reg, err := c.bus.Lookup(context.Background(), "mcp__fs__echo")
	if err != nil || reg.Pool != "test" || reg.Idempotent {
		t.Fatalf("registration %+v, %v", reg, err)
	}
	c.dispatch(t, "s1", "e1", "mcp__fs__echo", `{"text":"over the bus"}`)
	c.dispatch(t, "s1", "f1", "mcp__fs__fail", `{}`)
	c.dispatch(t, "s1", "g1", "mcp__fs__grow", `{}`)
	got := c.waitResults(t, 3)
	if rs := got["e1"]; len(rs) != 1 || rs[0].IsError || rs[0].Content[0].Text != "over the bus" {
		t.Fatalf("echo: %+v", rs)
	}
	if rs := got["f1"]; len(rs) != 1 || !rs[0].IsError || rs[0].Content[0].Text != "disk on fire" {
		t.Fatalf("fail: %+v", rs)
	}
	kittest.Eventually(t, 20*time.Second, "the added tool is registered", func() error {
		_, err := c.bus.Lookup(context.Background(), "mcp__fs__extra")
		return err
	})
	c.dispatch(t, "s1", "x1", "mcp__fs__extra", `{}`)
	if rs := c.waitResults(t, 4)["x1"]; len(rs) != 1 || rs[0].IsError || !strings.Contains(rs[0].Content[0].Text, "extra!") {
		t.Fatalf("extra: %+v", rs)
	}
	if _, err := c.bus.Lookup(context.Background(), "mcp__fs__broken"); err == nil {
		t.Fatal("a tool whose schema does not compile was registered")
	}
	_, body := r.Readiness()
	if p, _ := body.(map[string]any)["mcpProblems"].([]string); !strings.Contains(strings.Join(p, "\n"), `tool "broken": the input schema does not compile`) {
		t.Fatalf("readiness %+v", body)
	}
	_ = toolbus.ErrNotFound
}
