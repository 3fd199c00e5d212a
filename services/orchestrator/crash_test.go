package orchestrator

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"time"
)

// The crash test runs orchestrators as real processes: this test binary,
// started again with these variables set, runs one until it is killed.
const (
	envChildNATS   = "CAIRN_TEST_ORCH_NATS"
	envChildScript = "CAIRN_TEST_ORCH_SCRIPT"
	envChildName   = "CAIRN_TEST_ORCH_NAME"
)

func TestMain(m *testing.M) {
	kittest.Main(m, kittest.Children{"orchestrator": func() int {
		return runChild(os.Getenv(envChildNATS), os.Getenv(envChildScript), os.Getenv(envChildName))
	}})
}

func runChild(url, scriptPath, name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	nc, err := nats.Connect(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	js, _ := jetstreamNew(nc)
	log, err := session.NewJetStreamLog(ctx, js, session.WithCreate(false))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sc, err := scripted.Load(scriptPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o, err := New(Config{Conn: nc, Log: log, Instance: name, Partitions: 4, LeaseTTL: time.Second,
		Models: scriptedModels{scripted.New(sc)}, DefaultModel: "scripted/test"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := o.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

const crashScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "work hard"},
     "reply": {"toolCalls": [
       {"name": "bash", "arguments": {"command": "sleep 2; echo slept"}},
       {"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult"}, "reply": {"text": "finished"}},
    {"reply": {"text": "ok"}}
  ]
}`

func startChild(t *testing.T, p *platform, scriptPath, name string) *exec.Cmd {
	t.Helper()
	cmd := kittest.Command("orchestrator", envChildNATS+"="+p.nc.ConnectedUrl(), envChildScript+"="+scriptPath, envChildName+"="+name)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // it may have exited already
		_ = cmd.Wait()         // "signal: killed", or its exit
	})
	return cmd
}

// TestKillNineMidTurn kills the orchestrator process while a turn's tools
// run and queued messages wait, then checks what the next process does:
// every acknowledged command applied once, in order; the turn closed as
// interrupted; every tool call with exactly one result.
func TestKillNineMidTurn(t *testing.T) {
	p := newPlatform(t)
	scriptPath := t.TempDir() + "/script.json"
	if err := os.WriteFile(scriptPath, []byte(crashScript), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startChild(t, p, scriptPath, "a")
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "k1", Tools: []string{"bash", "ls"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "k1", Text: "work hard"})
	p.waitLog("k1", "tool calls recorded", func(es []events.Entry) bool {
		for _, e := range es {
			if e.Message != nil && e.Message.Role == events.RoleAssistant && len(e.Message.ToolCalls()) == 2 {
				return true
			}
		}
		return false
	})
	p.send(events.Command{ID: "c3", Type: events.CmdFollowUp, SessionID: "k1", Text: "and then this"})
	p.send(events.Command{ID: "c4", Type: events.CmdSteer, SessionID: "k1", Text: "steer that"})
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait() // "signal: killed", as sent

	startChild(t, p, scriptPath, "b")
	p.send(events.Command{ID: "c5", Type: events.CmdPrompt, SessionID: "k1", Text: "are you there"})
	es := p.waitLog("k1", "every command applied", func(es []events.Entry) bool {
		for _, id := range []string{"c1", "c2", "c3", "c4", "c5"} {
			if !named(id)(es) {
				return false
			}
		}
		// The run is over: the last message is a reply with no tool call.
		// c5 may be refused as busy (it can come while the queued messages'
		// turn runs), and its command_rejected entry is written at once, so
		// it may land before or after that turn's reply.
		return idleLog(es)
	})

	order := namedOnce(t, es)
	results := map[string]int{}
	interrupted := 0
	for _, e := range es {
		if e.Type == events.EntryTurnInterrupted {
			interrupted++
		}
		if m := e.Message; m != nil && m.Role == events.RoleToolResult {
			results[m.ToolCallID]++
		}
	}
	// Commands are taken in order; a queued steering message is recorded
	// when it is delivered, so it may land after later commands' entries.
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	if !(pos["c1"] < pos["c2"] && pos["c2"] < pos["c3"] && pos["c3"] < pos["c4"] && pos["c3"] < pos["c5"]) {
		t.Errorf("commands recorded in order %v", order)
	}
	if interrupted != 1 {
		t.Errorf("%d turn_interrupted entries, want 1", interrupted)
	}
	var calls []events.Block
	for _, e := range es {
		if m := e.Message; m != nil && m.Role == events.RoleAssistant {
			calls = append(calls, m.ToolCalls()...)
		}
	}
	for _, c := range calls {
		if results[c.ID] != 1 {
			t.Errorf("tool call %s (%s) has %d results, want exactly 1", c.ID, c.Name, results[c.ID])
		}
	}
	if recs := mustRecords(t, p, "k1"); len(session.VerifyChain(recs)) != 0 {
		t.Errorf("hash chain broken: %v", session.VerifyChain(recs))
	}
}

func jetstreamNew(nc *nats.Conn) (jetstream.JetStream, error) { return jetstream.New(nc) }

// TestKillNineWithNoCommandLeft kills the orchestrator while a turn runs and
// sends nothing afterwards: the next owner must still find the session (its
// running mark) and close the turn, though no command brings it back.
func TestKillNineWithNoCommandLeft(t *testing.T) {
	p := newPlatform(t)
	scriptPath := t.TempDir() + "/script.json"
	if err := os.WriteFile(scriptPath, []byte(crashScript), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startChild(t, p, scriptPath, "a")
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "k2", Tools: []string{"bash", "ls"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "k2", Text: "work hard"})
	p.waitLog("k2", "tool calls recorded", func(es []events.Entry) bool {
		if len(es) == 0 {
			return false
		}
		m := es[len(es)-1].Message
		return m != nil && m.Role == events.RoleAssistant && len(m.ToolCalls()) == 2
	})
	// Wait until the checkpoint has moved past both commands: the next owner
	// will read none of them again.
	kv, err := p.js.KeyValue(context.Background(), "cairn_checkpoints")
	if err != nil {
		t.Fatal(err)
	}
	p.waitLog("k2", "checkpoint past the prompt", func([]events.Entry) bool {
		keys, err := kv.ListKeysFiltered(context.Background(), "cmd.*")
		if err != nil {
			return false
		}
		for k := range keys.Keys() {
			if e, err := kv.Get(context.Background(), k); err == nil && string(e.Value()) == "3" {
				return true
			}
		}
		return false
	})
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait() // "signal: killed", as sent
	startChild(t, p, scriptPath, "b")
	es := p.waitLog("k2", "turn closed by the next owner", func(es []events.Entry) bool {
		return len(es) > 0 && es[len(es)-1].Type == events.EntryTurnInterrupted
	})
	results := 0
	for _, e := range es {
		if m := e.Message; m != nil && m.Role == events.RoleToolResult {
			results++
		}
	}
	if results != 2 {
		t.Fatalf("%d tool results, want exactly one for each of the 2 calls", results)
	}
}
