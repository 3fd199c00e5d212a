package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/cairn-agents/cairn/pkg/tools"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const script = `{
  "defaults": {"usage": {"input": 100, "output": 20}},
  "rules": [
    {"match": {"lastRole": "user", "contains": "list files"},
     "reply": {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "I see the files."}},
    {"match": {"lastRole": "user", "contains": "whoami"},
     "reply": {"toolCalls": [{"name": "whoami", "arguments": {}}]}},
    {"match": {"lastRole": "toolResult", "tool": "whoami"}, "reply": {"text": "asked"}},
    {"match": {"lastRole": "user", "contains": "slow"}, "reply": {"delayMs": 60000, "text": "late"}},
    {"reply": {"text": "ok"}}
  ]
}`

type platform struct {
	t    testing.TB
	nc   *nats.Conn
	js   jetstream.JetStream
	log  session.Log
	n    events.Names
	root string
}

// newPlatform provisions an embedded server and starts a toolrunner worker
// serving the built-in tools.
func newPlatform(t testing.TB) *platform {
	t.Helper()
	ctx := context.Background()
	n := events.Names{}
	_, nc, js := natstest.RunProvisioned(t, n, provision.Options{Partitions: 4})
	log, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	set, err := tools.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := set.Close(); err != nil {
			t.Errorf("close set: %v", err)
		}
	})
	bus, err := toolbus.New(nc, n)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	srvW, err := bus.Start(wctx, toolbus.Worker{Pool: "default", Tools: set.All(), WorkspaceRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- srvW.Wait() }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("tool worker: %v", err)
		}
	})
	return &platform{t: t, nc: nc, js: js, log: log, n: n, root: root}
}

// testLeaseTTL is the lease TTL of tests that stop orchestrators only
// cleanly (a stop releases its leases at once). It is long enough that a
// loaded machine (CI runs every package's tests at once, under -race)
// does not fence a lease whose renewal was merely slow, which would stop
// and recover runs a test expects to finish; the crash and failover tests
// use a short one, as they wait for a dead holder's lease to expire.
const testLeaseTTL = 5 * time.Second

func (p *platform) startOrchestrator(name string) (stop func()) {
	p.t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		p.t.Fatal(err)
	}
	prov := scripted.New(sc)
	o, err := New(Config{Conn: p.nc, Log: p.log, Instance: name, Partitions: 4, LeaseTTL: testLeaseTTL,
		Models: scriptedModels{prov}, DefaultModel: "scripted/test", Logger: failOnRefusedMove(p.t)})
	if err != nil {
		p.t.Fatal(err)
	}
	return kittest.Run(p.t, context.Background(), "orchestrator", o.Run)
}

func (p *platform) send(cmd events.Command) { p.t.Helper(); p.sendTo(events.DefaultTenant, cmd) }

// sendTo publishes cmd for the session of its id in tenant.
func (p *platform) sendTo(tenant string, cmd events.Command) {
	p.t.Helper()
	cmd.V = events.SchemaVersion
	data, _ := json.Marshal(cmd)
	msg := nats.NewMsg(p.n.CommandSubject(events.SessionRef{Tenant: tenant, ID: cmd.SessionID}))
	msg.Data = data
	msg.Header.Set(events.HeaderMsgID, events.CommandMsgID(tenant, cmd.ID))
	if _, err := p.js.PublishMsg(context.Background(), msg); err != nil {
		p.t.Fatal(err)
	}
}

// waitLog polls the session's log until cond holds.
func (p *platform) waitLog(sid, what string, cond func([]events.Entry) bool) []events.Entry {
	p.t.Helper()
	return p.waitLogOf(events.DefaultRef(sid), what, cond)
}

// waitLogOf is waitLog for a session of any tenant.
func (p *platform) waitLogOf(ref events.SessionRef, what string, cond func([]events.Entry) bool) []events.Entry {
	p.t.Helper()
	var es []events.Entry
	kittest.Eventually(p.t, 30*time.Second, what, func() error {
		recs, err := p.log.Read(context.Background(), ref, 0)
		if err != nil {
			return err
		}
		es = make([]events.Entry, len(recs))
		var got []string
		for i, r := range recs {
			es[i] = r.Entry
			d := r.Entry.Type
			if m := r.Entry.Message; m != nil {
				d = m.Role + ":" + m.Content.Text()
				if m.ErrorMessage != "" {
					d += " (error: " + m.ErrorMessage + ")"
				}
			}
			got = append(got, d+"["+r.Entry.CommandID+"]")
		}
		if cond(es) {
			return nil
		}
		return fmt.Errorf("the log: %s", strings.Join(got, " | "))
	})
	return es
}

func named(cmdID string) func([]events.Entry) bool {
	return func(es []events.Entry) bool {
		for _, e := range es {
			if e.CommandID == cmdID {
				return true
			}
		}
		return false
	}
}

func lastText(es []events.Entry) string {
	for i := len(es) - 1; i >= 0; i-- {
		if m := es[i].Message; m != nil && m.Role == events.RoleAssistant {
			return m.Content.Text()
		}
	}
	return ""
}

func TestPromptRunsToolsThroughToolrunner(t *testing.T) {
	p := newPlatform(t)
	p.startOrchestrator("o1")
	if err := os.MkdirAll(filepath.Join(p.root, "default", "s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.root, "default", "s1", "hello.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", Tools: []string{"ls"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "s1", Text: "please list files"})
	es := p.waitLog("s1", "reply after the tool", func(es []events.Entry) bool { return lastText(es) == "I see the files." })

	var roles []string
	var result *events.Message
	for _, e := range es {
		if e.Message != nil {
			roles = append(roles, e.Message.Role)
			if e.Message.Role == events.RoleToolResult {
				result = e.Message
			}
		}
	}
	if strings.Join(roles, ",") != "user,assistant,toolResult,assistant" {
		t.Fatalf("roles = %v", roles)
	}
	if result.IsError || !strings.Contains(result.Content.Text(), "hello.txt") {
		t.Fatalf("ls result = %q (error %v)", result.Content.Text(), result.IsError)
	}
	// The header, the prompt, then the system prompt the model call was
	// sent (named by no command).
	if es[0].Type != events.EntrySession || es[0].CommandID != "c1" || es[1].CommandID != "c2" || es[2].CustomType != events.CustomSystemPrompt || es[2].CommandID != "" {
		t.Fatalf("header/prompt not named by their commands: %+v / %+v", es[0], es[1])
	}
	if errs := session.VerifyChain(mustRecords(t, p, "s1")); len(errs) != 0 {
		t.Fatalf("hash chain: %v", errs)
	}
}

func mustRecords(t *testing.T, p *platform, sid string) []session.Record {
	recs, err := p.log.Read(context.Background(), events.DefaultRef(sid), 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestBusyPolicies(t *testing.T) {
	p := newPlatform(t)
	p.startOrchestrator("o1")
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s2", Tools: []string{}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "s2", Text: "slow please"})
	p.waitLog("s2", "prompt recorded", named("c2"))
	p.send(events.Command{ID: "c3", Type: events.CmdPrompt, SessionID: "s2", Text: "again"})
	es := p.waitLog("s2", "busy rejection", named("c3"))
	var rej events.Entry // not the last entry: the run's system prompt record may follow it
	for _, e := range es {
		if e.CommandID == "c3" {
			rej = e
		}
	}
	if rej.Type != events.EntryCommandRejected || rej.Code != codeBusy {
		t.Fatalf("c3 gave %+v, want a busy rejection", rej)
	}
	p.send(events.Command{ID: "c4", Type: events.CmdFollowUp, SessionID: "s2", Text: "after that"})
	p.send(events.Command{ID: "c5", Type: events.CmdAbort, SessionID: "s2"})
	es = p.waitLog("s2", "abort recorded", func(es []events.Entry) bool { return named("c5")(es) && named("c4")(es) })
	for _, e := range es {
		switch e.CommandID {
		case "c5":
			if e.Message == nil || e.Message.StopReason != events.StopAborted {
				t.Fatalf("abort applied as %+v, want the aborted reply", e)
			}
		case "c4":
			if e.Type != events.EntryCommandRejected || e.Code != codeCleared {
				t.Fatalf("queued follow-up recorded as %+v, want cleared by the abort", e)
			}
		}
	}
	// Idle again: a prompt runs.
	p.send(events.Command{ID: "c6", Type: events.CmdPrompt, SessionID: "s2", Text: "hello"})
	p.waitLog("s2", "reply", func(es []events.Entry) bool { return named("c6")(es) && lastText(es) == "ok" })
}

func TestCommandsToUnknownSessionAreRefused(t *testing.T) {
	p := newPlatform(t)
	p.startOrchestrator("o1")
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s3", Model: "nope/x"})
	p.send(events.Command{ID: "c2", Type: events.CmdCreate, SessionID: "s3", Workspace: "../etc"})
	p.send(events.Command{ID: "c3", Type: events.CmdCreate, SessionID: "s3", Tools: []string{"teleport"}})
	p.send(events.Command{ID: "c4", Type: events.CmdCreate, SessionID: "s3", Tools: []string{"ls"}})
	es := p.waitLog("s3", "created by c4", named("c4"))
	if len(es) != 1 || es[0].Type != events.EntrySession || es[0].CommandID != "c4" {
		t.Fatalf("log = %+v, want only the header of c4", es)
	}
}

// scriptedModels resolves scripted/<id> only.
type scriptedModels struct{ p *scripted.Provider }

func (s scriptedModels) Resolve(ref string) (llm.Provider, llm.Model, error) {
	id, ok := strings.CutPrefix(ref, "scripted/")
	if !ok || id == "" {
		return nil, llm.Model{}, fmt.Errorf("unknown model %q", ref)
	}
	return s.p, s.p.Model(id), nil
}

func (s scriptedModels) Providers() []string { return []string{"scripted"} }
