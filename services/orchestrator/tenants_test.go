package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
)

// whoami answers with the tenant the worker ran the call for.
type whoami struct{}

func (whoami) Spec() events.ToolSpec {
	return events.ToolSpec{Name: "whoami", Description: "says whose call it ran",
		Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true}
}

func (whoami) Execute(_ context.Context, c tool.Call, _ func(tool.Result)) (tool.Result, error) {
	return tool.Result{Content: []events.Block{events.TextBlock("ran for " + c.Tenant)}}, nil
}

// Two tenants' sessions of one id are two sessions end to end: their own
// logs, headers and workspaces; and a pool restricted to tenant acme never
// receives beta's call, which ends as an error result the model sees.
func TestTenantsWithTheSameSessionID(t *testing.T) {
	p := newPlatform(t)
	bus, err := toolbus.New(p.nc, p.n)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ran []string // tenants the acme-only pool ran calls for
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := bus.Start(ctx, toolbus.Worker{Pool: "acme-only", Tools: []tool.Tool{whoami{}}, Tenants: []string{"acme"},
		Observe: func(r events.ToolResult) { mu.Lock(); ran = append(ran, r.Tenant); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = srv.Wait() })
	p.startOrchestrator("o1")

	for _, tenant := range []string{"acme", "beta"} {
		dir := filepath.Join(p.root, tenant, "s1")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, tenant+".txt"), []byte(tenant), 0o644); err != nil {
			t.Fatal(err)
		}
		p.sendTo(tenant, events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", Tools: []string{"ls", "whoami"}})
		p.sendTo(tenant, events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "s1", Text: "please list files"})
	}
	for _, tenant := range []string{"acme", "beta"} {
		other := map[string]string{"acme": "beta", "beta": "acme"}[tenant]
		ref := events.SessionRef{Tenant: tenant, ID: "s1"}
		es := p.waitLogOf(ref, tenant+"'s reply after ls", func(es []events.Entry) bool { return lastText(es) == "I see the files." })
		if h := es[0]; h.Type != events.EntrySession || h.Tenant != tenant || h.Cwd != "s1" {
			t.Errorf("%s's header: type %s tenant %q cwd %q", tenant, h.Type, h.Tenant, h.Cwd)
		}
		res := toolResult(es, "ls")
		if res == nil || !strings.Contains(res.Content.Text(), tenant+".txt") || strings.Contains(res.Content.Text(), other) {
			t.Errorf("%s's ls saw %v, want its own workspace only", tenant, res)
		}
	}
	recs, err := p.log.Read(context.Background(), events.DefaultRef("s1"), 0)
	if err != nil || len(recs) != 0 {
		t.Fatalf("the default tenant's s1 holds %d entries (%v); it was never created", len(recs), err)
	}

	for _, tenant := range []string{"acme", "beta"} {
		p.sendTo(tenant, events.Command{ID: "c3", Type: events.CmdPrompt, SessionID: "s1", Text: "whoami please"})
	}
	acme := p.waitLogOf(events.SessionRef{Tenant: "acme", ID: "s1"}, "acme's whoami", func(es []events.Entry) bool { return lastText(es) == "asked" })
	if r := toolResult(acme, "whoami"); r == nil || r.IsError || r.Content.Text() != "ran for acme" {
		t.Errorf("acme's whoami result: %+v", r)
	}
	beta := p.waitLogOf(events.SessionRef{Tenant: "beta", ID: "s1"}, "beta's whoami", func(es []events.Entry) bool { return lastText(es) == "asked" })
	if r := toolResult(beta, "whoami"); r == nil || !r.IsError ||
		r.Content.Text() != `tool whoami is served by pool "acme-only", which does not serve tenant "beta"` {
		t.Errorf("beta's whoami result: %+v, want the refusal", r)
	}
	kittest.Eventually(t, 10*time.Second, "acme's call to be observed", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(ran) == 0 {
			return errors.New("no call observed")
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	for _, tn := range ran {
		if tn != "acme" {
			t.Errorf("the acme-only pool ran a call of tenant %q", tn)
		}
	}
}

// toolResult is the last toolResult message of tool in es.
func toolResult(es []events.Entry, tool string) *events.Message {
	var r *events.Message
	for _, e := range es {
		if m := e.Message; m != nil && m.Role == events.RoleToolResult && m.ToolName == tool {
			r = m
		}
	}
	return r
}
