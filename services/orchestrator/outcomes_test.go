package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
)

// waitRefusal polls the outcomes bucket for the refusal of cid.
func (p *platform) waitRefusal(sid, cid string) events.Outcome {
	p.t.Helper()
	ctx := context.Background()
	var r events.Outcome
	kittest.Eventually(p.t, 30*time.Second, "refusal of "+sid+"/"+cid+" recorded", func() error {
		kv, err := p.js.KeyValue(ctx, p.n.OutcomesBucket())
		if err != nil {
			return err
		}
		e, err := kv.Get(ctx, events.OutcomeKey(events.DefaultRef(sid), cid))
		if err != nil {
			return err
		}
		if r, err = events.DecodeOutcome(e.Value()); err != nil {
			p.t.Fatal(err)
		}
		return nil
	})
	return r
}

// A command refused where the session has no log is recorded in the
// outcomes bucket; read again after a failover, when the session exists,
// it is finished as refused, not applied anew.
func TestRefusalsWithoutALog(t *testing.T) {
	p := newPlatform(t)
	stop := p.startOrchestrator("o1")
	p.send(events.Command{ID: "g1", Type: events.CmdPrompt, SessionID: "r1", Text: "hi"})
	if r := p.waitRefusal("r1", "g1"); r.Code != codeNoSession || r.Type != events.CmdPrompt || !strings.Contains(r.Reason, "session r1 does not exist") {
		t.Fatalf("refusal of a prompt to a missing session: %+v", r)
	}
	// Without a workspace root, an absolute workspace cannot be checked.
	p.send(events.Command{ID: "c0", Type: events.CmdCreate, SessionID: "r2", Workspace: "/srv/ws"})
	if r := p.waitRefusal("r2", "c0"); r.Code != codeInvalid || !strings.Contains(r.Reason, `workspace: "/srv/ws" is absolute, and the workspace root is not known`) {
		t.Fatalf("refusal of an absolute workspace: %+v", r)
	}
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "r1", Workspace: "a/b"})
	es := p.waitLog("r1", "created", named("c1"))
	if es[0].Cwd != "a/b" {
		t.Fatalf("workspace recorded as %q", es[0].Cwd)
	}
	stop()

	// The next owner reads every command again from the start.
	ctx := context.Background()
	cp, err := p.js.KeyValue(ctx, p.n.CheckpointsBucket())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cp.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys.Keys() {
		if strings.HasPrefix(k, "cmd.") {
			if err := cp.Purge(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.startOrchestrator("o2")
	p.send(events.Command{ID: "p2", Type: events.CmdPrompt, SessionID: "r1", Text: "after"})
	es = p.waitLog("r1", "the prompt after the replay answered", func(es []events.Entry) bool { return named("p2")(es) && lastText(es) == "ok" })
	if named("g1")(es) {
		var got []string
		for _, e := range es {
			got = append(got, e.Type+"["+e.CommandID+"]")
		}
		t.Fatalf("the prompt refused before the session existed was applied on replay: %s", strings.Join(got, " | "))
	}
}
