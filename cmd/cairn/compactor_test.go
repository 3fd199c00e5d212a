package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/services/compactor"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const compactScript = `{"defaults":{"contextWindow":4000,"maxOutput":1000,"usage":"estimate"},"rules":[
 {"match":{"contains":"branch the user is leaving"},"reply":{"text":"## Goal\nthe branch tried the second question"}},
 {"match":{"contains":"<conversation>"},"reply":{"text":"## Goal\nanswer questions"}},
 {"reply":{"text":"ok"}}]}`

// compactPlatform runs an orchestrator and a compactor on an embedded
// server, as cairn up does, and reads the session log.
type compactPlatform struct {
	t   *testing.T
	js  jetstream.JetStream
	log session.Log
}

func newCompactPlatform(t *testing.T) *compactPlatform {
	t.Helper()
	ctx := context.Background()
	n := events.Names{}
	srv, _, js := natstest.RunProvisioned(t, n, provision.Options{Partitions: 4})
	nc := natstest.Connect(t, srv.Server)
	sessionLog, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	script := t.TempDir() + "/script.json"
	if err := os.WriteFile(script, []byte(compactScript), 0o600); err != nil {
		t.Fatal(err)
	}
	models, err := modelsFor(script, "scripted/small", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	comp, err := compactor.New(compactor.Config{NATSURL: srv.ClientURL(), Models: models, Name: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	orch, err := orchestrator.New(orchestrator.Config{Conn: nc, Log: sessionLog, Models: models, DefaultModel: "scripted/small",
		Partitions: 4, LeaseTTL: time.Second, Instance: "o1"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, f func(context.Context) error) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- f(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	run("compactor", comp.Run)
	run("orchestrator", orch.Run)
	return &compactPlatform{t: t, js: js, log: sessionLog}
}

func (p *compactPlatform) send(cmd events.Command) {
	p.t.Helper()
	cmd.V = events.SchemaVersion
	data, _ := json.Marshal(cmd)
	msg := nats.NewMsg(events.Names{}.CommandSubject(events.DefaultRef(cmd.SessionID)))
	msg.Data = data
	msg.Header.Set(events.HeaderMsgID, cmd.ID)
	if _, err := p.js.PublishMsg(context.Background(), msg); err != nil {
		p.t.Fatal(err)
	}
}

// waitLog polls the log of sid until cond holds, and returns the log.
func (p *compactPlatform) waitLog(sid, what string, cond func([]events.Entry) bool) []events.Entry {
	p.t.Helper()
	var es []events.Entry
	kittest.Eventually(p.t, 30*time.Second, what, func() bool {
		recs, err := p.log.Read(context.Background(), events.DefaultRef(sid), 0)
		if err != nil || len(recs) == 0 {
			return false
		}
		es = make([]events.Entry, len(recs))
		for i := range recs {
			es[i] = recs[i].Entry
		}
		return cond(es)
	})
	return es
}

// await waits for an entry naming cmdID.
func (p *compactPlatform) await(sid, cmdID string) []events.Entry {
	p.t.Helper()
	return p.waitLog(sid, "an entry of command "+cmdID, func(es []events.Entry) bool {
		for _, e := range es {
			if e.CommandID == cmdID {
				return true
			}
		}
		return false
	})
}

func TestCompactAndNavigateCommandsRunThroughTheCompactor(t *testing.T) {
	p := newCompactPlatform(t)
	const sid = "compact-cmd"
	p.send(events.Command{ID: "create", SessionID: sid, Type: events.CmdCreate, Tools: []string{}})
	p.await(sid, "create")
	for _, id := range []string{"p1", "p2", "p3"} {
		p.send(events.Command{ID: id, SessionID: sid, Type: events.CmdPrompt, Text: id + " " + strings.Repeat("z", 2000)})
		p.await(sid, id)
		p.waitLog(sid, "the reply to "+id, func(es []events.Entry) bool {
			// An assistant message after the prompt's user message: the
			// log may go on past it (an automatic compaction).
			asked := false
			for _, e := range es {
				if e.Type == events.EntryMessage && e.Message.Role == events.RoleUser && e.CommandID == id {
					asked = true
				} else if asked && e.Type == events.EntryMessage && e.Message.Role == events.RoleAssistant {
					return true
				}
			}
			return false
		})
	}
	p.send(events.Command{ID: "c1", SessionID: sid, Type: events.CmdCompact, Instructions: "keep the numbers"})
	es := p.await(sid, "c1")
	var comp *events.Entry
	n := 0
	for i := range es {
		if es[i].Type == events.EntryCompaction {
			comp, n = &es[i], n+1
		}
	}
	if n != 1 || comp.CommandID != "c1" || comp.Summary != "## Goal\nanswer questions" || comp.FirstKeptEntryID == "" || comp.TokensBefore == 0 {
		for _, e := range es {
			t.Logf("%s %s cmd=%s reason=%s", e.ID, e.Type, e.CommandID, e.Reason)
		}
		t.Fatalf("compaction entries: %d, %+v", n, comp)
	}
	// Compacting again at once has nothing new to summarise: refused.
	p.send(events.Command{ID: "c2", SessionID: sid, Type: events.CmdCompact})
	es = p.await(sid, "c2")
	if last := es[len(es)-1]; last.Type != events.EntryCommandRejected || !strings.Contains(last.Reason, "nothing to compact") {
		t.Fatalf("second compact: %+v", last)
	}
	// Navigate back to the first reply, summarising the branch left.
	var firstReply string
	for _, e := range es {
		if e.Type == events.EntryMessage && e.Message.Role == events.RoleAssistant {
			firstReply = e.ID
			break
		}
	}
	p.send(events.Command{ID: "n1", SessionID: sid, Type: events.CmdNavigate, EntryID: &firstReply, Summarize: true})
	p.await(sid, "n1")
	es = p.waitLog(sid, "a branch summary after the navigation", func(es []events.Entry) bool {
		return es[len(es)-1].Type == events.EntryBranchSummary
	})
	if bs := es[len(es)-1]; bs.Summary != "## Goal\nthe branch tried the second question" {
		t.Fatalf("branch summary %+v", bs)
	}
}
