package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/session"
)

// budgetScript: every call uses 120 tokens; a run of "list files" makes
// two calls, "slow" one call that takes a minute.
const budgetScript = `{
  "defaults": {"usage": {"input": 100, "output": 20}, "maxOutput": 50},
  "rules": [
    {"match": {"lastRole": "user", "contains": "list files"},
     "reply": {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "I see the files."}},
    {"match": {"lastRole": "user", "contains": "slow"}, "reply": {"delayMs": 60000, "text": "late"}},
    {"reply": {"text": "ok"}}
  ]
}`

func (p *platform) startBudgetOrchestrator(name string) (stop func()) {
	p.t.Helper()
	sc, err := scripted.Parse([]byte(budgetScript))
	if err != nil {
		p.t.Fatal(err)
	}
	o, err := New(Config{Conn: p.nc, Log: p.log, Instance: name, Partitions: 4, LeaseTTL: testLeaseTTL,
		Models: scriptedModels{scripted.New(sc)}, DefaultModel: "scripted/test"})
	if err != nil {
		p.t.Fatal(err)
	}
	return kittest.Run(p.t, context.Background(), "orchestrator "+name, o.Run)
}

// createInTenant writes session sid's header with tenant, as the create
// of a tenant's principal will.
func (p *platform) createInTenant(sid, tenant string) {
	p.t.Helper()
	h := events.Entry{V: events.SchemaVersion, Type: events.EntrySession, ID: sid, CommandID: "create-" + sid,
		Timestamp: events.FormatTime(time.Now()), Version: events.PiVersion, Cwd: sid, Model: "scripted/test",
		Tools: []string{"ls"}, Tenant: tenant}
	if _, err := session.Create(context.Background(), p.log, h); err != nil {
		p.t.Fatal(err)
	}
}

func (p *platform) ledger() *budget.Ledger {
	p.t.Helper()
	l, err := budget.Open(context.Background(), p.js, budget.Options{Names: p.n})
	if err != nil {
		p.t.Fatal(err)
	}
	return l
}

// waitRuns waits until tenant has n runs in progress.
func waitRuns(t *testing.T, l *budget.Ledger, tenant string, n int64) budget.Status {
	t.Helper()
	var st budget.Status
	kittest.Eventually(t, 30*time.Second, fmt.Sprintf("%d runs in progress of tenant %s", n, tenant), func() error {
		var err error
		st, err = l.Status(context.Background(), tenant)
		if err == nil && st.Today.Runs != n {
			err = fmt.Errorf("%d runs", st.Today.Runs)
		}
		return err
	})
	return st
}

// settledAfter reports whether the run of command cmdID is over in es: the
// command was refused, or a reply with no tool call or a turn_interrupted
// entry follows its message.
func settledAfter(es []events.Entry, cmdID string) bool {
	for i, e := range es {
		if e.CommandID != cmdID {
			continue
		}
		if e.Type == events.EntryCommandRejected {
			return true
		}
		for _, f := range es[i+1:] {
			if m := f.Message; m != nil && m.Role == events.RoleAssistant && m.StopReason != events.StopToolUse {
				return true
			}
			if f.Type == events.EntryTurnInterrupted {
				// Closed by a recovery: two orchestrators starting together
				// move partitions while the first prompts run.
				return true
			}
		}
		return false
	}
	return false
}

func budgetError(es []events.Entry) string {
	for _, e := range es {
		if m := e.Message; m != nil && m.Role == events.RoleAssistant && m.StopReason == events.StopError {
			return m.ErrorMessage
		}
	}
	return ""
}

func rejection(es []events.Entry, cmdID string) (code, reason string) {
	for _, e := range es {
		if e.CommandID == cmdID && e.Type == events.EntryCommandRejected {
			return e.Code, e.Reason
		}
	}
	return "", ""
}

// TestBudgetExceededEndsRunAndRefusesPrompts: a run whose second call is
// over the tokens limit ends with the `budget exceeded` assistant error
// entry; the next prompt is refused with budget_exceeded; the state is in
// NATS, so another orchestrator started after the first stopped refuses
// too, and a raised limit lets prompts in again.
func TestBudgetExceededEndsRunAndRefusesPrompts(t *testing.T) {
	p := newPlatform(t)
	l := p.ledger()
	ctx := context.Background()
	if err := l.SetLimits(ctx, "acme", budget.Limits{TokensPerDay: 100}); err != nil {
		t.Fatal(err)
	}
	stop := p.startBudgetOrchestrator("o1")
	p.createInTenant("b1", "acme")
	p.sendTo("acme", events.Command{ID: "p1", Type: events.CmdPrompt, SessionID: "b1", Text: "list files"})
	es := p.waitLogOf(events.Ref("acme", "b1"), "the run ends", func(es []events.Entry) bool { return settledAfter(es, "p1") })
	want := "budget exceeded: tokensPerDay 100 used 120 of tenant acme"
	if got := budgetError(es); got != want {
		t.Fatalf("the run's error entry says %q, want %q", got, want)
	}
	// The slot goes back just before agent_end, after the last entry.
	st := waitRuns(t, l, "acme", 0)
	if st.Today.Tokens != 120 || st.Today.Calls != 1 || st.Today.ReservedTokens != 0 {
		t.Errorf("status after the run: %+v, want 120 tokens of 1 call, nothing reserved", st.Today)
	}

	p.sendTo("acme", events.Command{ID: "p2", Type: events.CmdPrompt, SessionID: "b1", Text: "hello"})
	es = p.waitLogOf(events.Ref("acme", "b1"), "p2 refused", named("p2"))
	if code, reason := rejection(es, "p2"); code != budget.Code || reason != want {
		t.Errorf("p2: rejected %q %q, want %q %q", code, reason, budget.Code, want)
	}

	// Restart: the next orchestrator reads the same use from NATS.
	stop()
	p.startBudgetOrchestrator("o2")
	p.sendTo("acme", events.Command{ID: "p3", Type: events.CmdPrompt, SessionID: "b1", Text: "hello"})
	es = p.waitLogOf(events.Ref("acme", "b1"), "p3 refused", named("p3"))
	if code, _ := rejection(es, "p3"); code != budget.Code {
		t.Errorf("p3 after a restart: rejected %q, want %q", code, budget.Code)
	}

	if err := l.SetLimits(ctx, "acme", budget.Limits{TokensPerDay: 10000}); err != nil {
		t.Fatal(err)
	}
	p.sendTo("acme", events.Command{ID: "p4", Type: events.CmdPrompt, SessionID: "b1", Text: "hello"})
	es = p.waitLogOf(events.Ref("acme", "b1"), "p4 answered", func(es []events.Entry) bool { return settledAfter(es, "p4") })
	if code, _ := rejection(es, "p4"); code != "" || lastText(es) != "ok" {
		t.Errorf("p4 with a raised limit: rejected %q, last reply %q", code, lastText(es))
	}
	// Another tenant's budget is not this one's.
	p.createInTenant("other", "")
	p.send(events.Command{ID: "q1", Type: events.CmdPrompt, SessionID: "other", Text: "hello"})
	es = p.waitLog("other", "q1 answered", func(es []events.Entry) bool { return settledAfter(es, "q1") })
	if lastText(es) != "ok" {
		t.Errorf("a default-tenant session: last reply %q", lastText(es))
	}
	// A tenant without limits is not metered: nothing written on its keys.
	st, err := l.Status(ctx, budget.DefaultTenant)
	if err != nil || st.Today.Tokens != 0 || st.Today.Runs != 0 {
		t.Errorf("default tenant status %+v (%v), want nothing metered", st.Today, err)
	}
}

// TestBudgetOvershootBoundAcrossOrchestrators runs sessions of one tenant
// on two orchestrators against a small tokens budget, round after round,
// until every session is refused: the settled use is at least the limit
// and at most the limit plus one call per session, and equals the usage
// the logs record.
func TestBudgetOvershootBoundAcrossOrchestrators(t *testing.T) {
	const (
		sessions = 8
		limit    = 1000
		perCall  = 120
	)
	p := newPlatform(t)
	l := p.ledger()
	ctx := context.Background()
	if err := l.SetLimits(ctx, "acme", budget.Limits{TokensPerDay: limit}); err != nil {
		t.Fatal(err)
	}
	p.startBudgetOrchestrator("o1")
	p.startBudgetOrchestrator("o2")
	sids := make([]string, sessions)
	for i := range sids {
		sids[i] = fmt.Sprintf("os%d", i)
		p.createInTenant(sids[i], "acme")
	}
	refused := map[string]bool{}
	for round := 0; len(refused) < sessions; round++ {
		if round == 20 {
			t.Fatalf("after %d rounds only %d of %d sessions met the budget", round, len(refused), sessions)
		}
		for _, sid := range sids {
			if !refused[sid] {
				p.sendTo("acme", events.Command{ID: fmt.Sprintf("%s-r%d", sid, round), Type: events.CmdPrompt, SessionID: sid, Text: "list files"})
			}
		}
		for _, sid := range sids {
			if refused[sid] {
				continue
			}
			id := fmt.Sprintf("%s-r%d", sid, round)
			es := p.waitLogOf(events.Ref("acme", sid), id+" settled", func(es []events.Entry) bool { return settledAfter(es, id) })
			if code, _ := rejection(es, id); code == budget.Code || strings.HasPrefix(budgetError(es), "budget exceeded") {
				refused[sid] = true
			}
		}
	}
	var logged int64
	for _, sid := range sids {
		recs, err := p.log.Read(context.Background(), events.Ref("acme", sid), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if m := r.Entry.Message; m != nil && m.Role == events.RoleAssistant && m.Usage != nil {
				logged += m.Usage.Input + m.Usage.Output
			}
		}
	}
	st := waitRuns(t, l, "acme", 0)
	used := st.Today.Tokens
	t.Logf("settled %d tokens in %d calls; limit %d; bound %d", used, st.Today.Calls, limit, limit+sessions*perCall)
	if used < limit || used > limit+sessions*perCall {
		t.Errorf("settled use %d, want from %d to %d (the limit plus one call per session)", used, limit, limit+sessions*perCall)
	}
	if used != logged {
		t.Errorf("the ledger settled %d tokens, the logs record %d", used, logged)
	}
	if st.Today.ReservedTokens != 0 {
		t.Errorf("after every run: %d tokens reserved, want none", st.Today.ReservedTokens)
	}
}

// TestBudgetRunSlotComesBackAfterCrash: with one concurrent run allowed, a
// run in a killed orchestrator process holds the slot only until its hold
// lapses; then another session's run is admitted. While it holds it, a
// prompt of another session is refused with budget_exceeded.
func TestBudgetRunSlotComesBackAfterCrash(t *testing.T) {
	p := newPlatform(t)
	l := p.ledger()
	ctx := context.Background()
	if err := l.SetLimits(ctx, budget.DefaultTenant, budget.Limits{ConcurrentRuns: 1}); err != nil {
		t.Fatal(err)
	}
	scriptPath := t.TempDir() + "/script.json"
	if err := os.WriteFile(scriptPath, []byte(budgetScript), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startChild(t, p, scriptPath, "a")
	p.createInTenant("c1", "")
	p.createInTenant("c2", "")
	p.send(events.Command{ID: "slow1", Type: events.CmdPrompt, SessionID: "c1", Text: "slow"})
	waitRuns(t, l, budget.DefaultTenant, 1) // the slow run holds the slot
	p.send(events.Command{ID: "x1", Type: events.CmdPrompt, SessionID: "c2", Text: "hello"})
	es := p.waitLog("c2", "x1 refused", named("x1"))
	if code, reason := rejection(es, "x1"); code != budget.Code || reason != "budget exceeded: concurrentRuns 1 in progress 1 of tenant default" {
		t.Errorf("x1 while the slot is held: rejected %q %q", code, reason)
	}

	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the orchestrator exited with %v, want killed", err)
	}
	// Nobody releases it: it lapses after the hold TTL (3 lease TTLs).
	waitRuns(t, l, budget.DefaultTenant, 0)
	p.startBudgetOrchestrator("b")
	p.send(events.Command{ID: "x2", Type: events.CmdPrompt, SessionID: "c2", Text: "hello"})
	es = p.waitLog("c2", "x2 answered", func(es []events.Entry) bool { return settledAfter(es, "x2") })
	if code, _ := rejection(es, "x2"); code != "" || lastText(es) != "ok" {
		t.Errorf("x2 after the slot came back: rejected %q, last reply %q", code, lastText(es))
	}
	// The slot of the finished run is released at its end, well before
	// its hold would lapse.
	waitRuns(t, l, budget.DefaultTenant, 0)
	var ex *budget.Exceeded
	if err := l.Check(ctx, budget.DefaultTenant, "c2"); errors.As(err, &ex) {
		t.Errorf("check after the runs: %v", err)
	}
}
