package orchestrator

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"
)

// approvalScript asks for tool calls with fixed ids, so tests can answer them.
const approvalScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "two asks"},
     "reply": {"toolCalls": [
       {"id": "t1", "name": "bash", "arguments": {"command": "echo one"}},
       {"id": "t2", "name": "bash", "arguments": {"command": "echo two"}}]}},
    {"match": {"lastRole": "user", "contains": "one ask"},
     "reply": {"toolCalls": [
       {"id": "t1", "name": "bash", "arguments": {"command": "echo asked"}},
       {"id": "t2", "name": "ls", "arguments": {"path": "."}},
       {"id": "t3", "name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult"}, "reply": {"text": "finished"}},
    {"reply": {"text": "ok"}}
  ]
}`

var askBash = &events.Approvals{Tools: map[string]string{"bash": events.PolicyAsk}}

func (p *platform) startApprovals(name, script string) (*Orchestrator, func()) {
	p.t.Helper()
	return p.startApprovalsLogging(name, script, failOnRefusedMove(p.t))
}

// startApprovalsLogging is startApprovals with the orchestrator's logger.
func (p *platform) startApprovalsLogging(name, script string, logger *slog.Logger) (*Orchestrator, func()) {
	p.t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		p.t.Fatal(err)
	}
	o, err := New(Config{Conn: p.nc, Log: p.log, Instance: name, Partitions: 4, LeaseTTL: testLeaseTTL,
		Models: scriptedModels{scripted.New(sc)}, DefaultModel: "scripted/test", Logger: logger})
	if err != nil {
		p.t.Fatal(err)
	}
	return o, kittest.Run(p.t, context.Background(), "orchestrator", o.Run)
}

func countType(es []events.Entry, typ string) int {
	n := 0
	for _, e := range es {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// results returns the tool results of the log in order.
func results(es []events.Entry) []*events.Message {
	var out []*events.Message
	for _, e := range es {
		if e.Type == events.EntryMessage && e.Message != nil && e.Message.Role == events.RoleToolResult {
			out = append(out, e.Message)
		}
	}
	return out
}

func resultIDs(es []events.Entry) string {
	var ids []string
	for _, m := range results(es) {
		ids = append(ids, m.ToolCallID)
	}
	return strings.Join(ids, ",")
}

func (p *platform) waitRequests(sid string, n int) []events.Entry {
	p.t.Helper()
	return p.waitLog(sid, "approval requests", func(es []events.Entry) bool { return countType(es, events.EntryApprovalRequested) == n })
}

// waitState polls the actor of sid until it is in s.
func waitState(t *testing.T, o *Orchestrator, sid string, s ...lifecycle.State) {
	t.Helper()
	kittest.Eventually(t, 30*time.Second, "actor state", func() error {
		o.mu.Lock()
		a := o.mu.actors[events.DefaultRef(sid)]
		o.mu.Unlock()
		if a == nil {
			return errString("no actor")
		}
		for _, want := range s {
			if a.is(want) {
				return nil
			}
		}
		return errString("state " + a.state.State().String())
	})
}

type errString string

func (e errString) Error() string { return string(e) }

func TestParallelApprovalsAnsweredInReverseOrder(t *testing.T) {
	p := newPlatform(t)
	o, _ := p.startApprovals("o1", approvalScript)
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "a1", Tools: []string{"bash", "ls"}, Approvals: askBash})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "a1", Text: "two asks"})
	es := p.waitRequests("a1", 2)
	if n := len(results(es)); n != 0 {
		t.Fatalf("%d results recorded before any answer", n)
	}
	waitState(t, o, "a1", lifecycle.Waiting, lifecycle.Shrunk)
	p.send(events.Command{ID: "c3", Type: events.CmdApprove, SessionID: "a1", ToolCallID: "t2", Principal: "key:alice"})
	p.waitLog("a1", "t2 answered", named("c3"))
	p.send(events.Command{ID: "c4", Type: events.CmdApprove, SessionID: "a1", ToolCallID: "t1", Principal: "key:bob"})
	es = p.waitLog("a1", "the run goes on", func(es []events.Entry) bool { return lastText(es) == "finished" })
	if got := resultIDs(es); got != "t1,t2" {
		t.Fatalf("results recorded as %s, want the model's order t1,t2", got)
	}
	rs := results(es)
	if !strings.Contains(rs[0].Content.Text(), "one") || !strings.Contains(rs[1].Content.Text(), "two") || rs[0].IsError || rs[1].IsError {
		t.Fatalf("results %q / %q", rs[0].Content.Text(), rs[1].Content.Text())
	}
	for _, e := range es {
		if e.Type == events.EntryApprovalAnswered && e.CommandID == "c3" && (e.Principal != "key:alice" || e.ToolCallID != "t2") {
			t.Fatalf("answer recorded as %+v", e)
		}
	}
	waitState(t, o, "a1", lifecycle.Idle, lifecycle.Shrunk, lifecycle.Evicted)
}

func TestOneApprovalBesideTwoThatRunAtOnce(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", approvalScript)
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "a2", Tools: []string{"bash", "ls"}, Approvals: askBash})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "a2", Text: "one ask"})
	// The two ls calls run without waiting: their results are held.
	p.waitLog("a2", "two held results", func(es []events.Entry) bool {
		return countType(es, events.EntryApprovalRequested) == 1 && countType(es, events.EntryToolResultHeld) == 2
	})
	p.send(events.Command{ID: "c3", Type: events.CmdSteer, SessionID: "a2", Text: "steered meanwhile"})
	p.send(events.Command{ID: "c4", Type: events.CmdDeny, SessionID: "a2", ToolCallID: "t1", Reason: "not on a Friday", Principal: "key:carol"})
	es := p.waitLog("a2", "the run goes on", func(es []events.Entry) bool { return named("c3")(es) && lastText(es) == "ok" })
	if got := resultIDs(es); got != "t1,t2,t3" {
		t.Fatalf("results recorded as %s, want t1,t2,t3", got)
	}
	denied := results(es)[0]
	if !denied.IsError || !strings.Contains(denied.Content.Text(), "key:carol") || !strings.Contains(denied.Content.Text(), "not on a Friday") {
		t.Fatalf("the denied call's result = %q (error %v), want who and why", denied.Content.Text(), denied.IsError)
	}
	// The steering message is delivered after the batch's results.
	last := -1
	for i, e := range es {
		if e.Message != nil && e.Message.Role == events.RoleToolResult {
			last = i
		}
		if e.CommandID == "c3" && (last < 0 || i < last) {
			t.Fatalf("the steering message landed at %d, before the batch's results ended at %d", i, last)
		}
	}
}

// TestBadAnswersAreRefused: every answer that must not count is refused
// with a reason and changes nothing.
func TestBadAnswersAreRefused(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", approvalScript)
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "b1", Tools: []string{"bash", "ls"}, Approvals: askBash})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "b1", Text: "two asks"})
	p.send(events.Command{ID: "d1", Type: events.CmdCreate, SessionID: "b2", Tools: []string{"bash"}})
	p.send(events.Command{ID: "d2", Type: events.CmdPrompt, SessionID: "b2", Text: "hello"})
	p.waitRequests("b1", 2)
	p.send(events.Command{ID: "c3", Type: events.CmdApprove, SessionID: "b1", ToolCallID: "t1"})
	p.waitLog("b1", "t1 answered", named("c3"))

	cases := []struct {
		name string
		sid  string
		cmd  events.Command
		code string
		has  string
	}{
		{"unknown call", "b1", events.Command{ToolCallID: "t9", Type: events.CmdApprove}, codeUnknownCall, `"t9"`},
		{"already answered", "b1", events.Command{ToolCallID: "t1", Type: events.CmdDeny, Reason: "changed my mind"}, codeAnswered, "already answered"},
		{"another session's call", "b2", events.Command{ToolCallID: "t2", Type: events.CmdApprove}, codeUnknownCall, "session b2"},
		{"arguments failing the schema", "b1", events.Command{ToolCallID: "t2", Type: events.CmdApprove, Arguments: json.RawMessage(`{"command":7}`)}, codeInvalid, "arguments"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := tc.cmd
			cmd.ID, cmd.SessionID = "bad"+string(rune('a'+i)), tc.sid
			before := mustRecords(t, p, "b1")
			p.send(cmd)
			es := p.waitLog(tc.sid, "refusal", named(cmd.ID))
			code, reason := rejection(es, cmd.ID)
			if code != tc.code || !strings.Contains(reason, tc.has) {
				t.Fatalf("refused with %q %q, want %q naming %q", code, reason, tc.code, tc.has)
			}
			after := mustRecords(t, p, "b1")
			for _, r := range after[len(before):] {
				if r.Entry.Type == events.EntryApprovalAnswered || (r.Entry.Message != nil && r.Entry.Message.Role == events.RoleToolResult) {
					t.Fatalf("a refused answer changed the batch: %+v", r.Entry)
				}
			}
		})
	}
	// The same command again is a no-op (idempotent by its id).
	p.send(events.Command{ID: "c3", Type: events.CmdApprove, SessionID: "b1", ToolCallID: "t1"})
	p.send(events.Command{ID: "c4", Type: events.CmdApprove, SessionID: "b1", ToolCallID: "t2", Arguments: json.RawMessage(`{"command":"echo edited"}`)})
	es := p.waitLog("b1", "the run goes on", func(es []events.Entry) bool { return lastText(es) == "finished" })
	if n := countType(es, events.EntryApprovalAnswered); n != 2 {
		t.Fatalf("%d answers recorded, want 2", n)
	}
	if rs := results(es); len(rs) != 2 || !strings.Contains(rs[1].Content.Text(), "edited") {
		t.Fatalf("the edited call did not run with its edit: %+v", rs)
	}
	for _, e := range es {
		if e.Type == events.EntryApprovalAnswered && e.CommandID == "c4" && !strings.Contains(string(e.Arguments), "edited") {
			t.Fatalf("the edit is not recorded: %+v", e)
		}
	}
}

func TestExpiryDeniesAndLateAnswersAreRefused(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", approvalScript)
	pol := &events.Approvals{Tools: map[string]string{"*": events.PolicyAsk, "ls": events.PolicyAllow}, ExpiresAfterMs: 300}
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "x1", Tools: []string{"bash", "ls"}, Approvals: pol})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "x1", Text: "two asks"})
	es := p.waitLog("x1", "expired and settled", func(es []events.Entry) bool { return lastText(es) == "finished" })
	for _, m := range results(es) {
		if !m.IsError || !strings.Contains(m.Content.Text(), "expired") {
			t.Fatalf("an expired call's result = %q", m.Content.Text())
		}
	}
	p.send(events.Command{ID: "c3", Type: events.CmdApprove, SessionID: "x1", ToolCallID: "t1"})
	es = p.waitLog("x1", "late answer refused", named("c3"))
	if code, _ := rejection(es, "c3"); code != codeUnknownCall {
		t.Fatalf("a late answer was refused with %q, want %q", code, codeUnknownCall)
	}
}

func TestAbortDeniesEveryPendingCall(t *testing.T) {
	p := newPlatform(t)
	o, _ := p.startApprovals("o1", approvalScript)
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "ab", Tools: []string{"bash", "ls"}, Approvals: askBash})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "ab", Text: "two asks"})
	p.waitRequests("ab", 2)
	waitState(t, o, "ab", lifecycle.Waiting, lifecycle.Shrunk)
	p.send(events.Command{ID: "c3", Type: events.CmdAbort, SessionID: "ab", Principal: "key:dave"})
	es := p.waitLog("ab", "aborted", func(es []events.Entry) bool {
		return len(es) > 0 && es[len(es)-1].Message != nil && es[len(es)-1].Message.StopReason == events.StopAborted
	})
	if got := resultIDs(es); got != "t1,t2" {
		t.Fatalf("results %s, want t1,t2", got)
	}
	for _, m := range results(es) {
		if !m.IsError || !strings.Contains(m.Content.Text(), "key:dave") || !strings.Contains(m.Content.Text(), "aborted") {
			t.Fatalf("an aborted call's result = %q", m.Content.Text())
		}
	}
	p.send(events.Command{ID: "c4", Type: events.CmdPrompt, SessionID: "ab", Text: "hello"})
	p.waitLog("ab", "idle again", func(es []events.Entry) bool { return named("c4")(es) && lastText(es) == "ok" })
}

// TestWaitingSurvivesEviction: a waiting session leaves memory and comes
// back waiting, from the log, at its answer.
func TestWaitingSurvivesEviction(t *testing.T) {
	p := newPlatform(t)
	o, _ := p.startApprovals("o1", approvalScript)
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "ev", Tools: []string{"bash", "ls"}, Approvals: askBash})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "ev", Text: "one ask"})
	p.waitLog("ev", "held", func(es []events.Entry) bool { return countType(es, events.EntryToolResultHeld) == 2 })
	waitState(t, o, "ev", lifecycle.Waiting, lifecycle.Shrunk)
	kittest.Eventually(t, 30*time.Second, "evicted", func() error {
		o.EvictIdle()
		if n, _ := o.Resident(); n != 0 {
			return errString("still resident")
		}
		return nil
	})
	p.send(events.Command{ID: "c3", Type: events.CmdApprove, SessionID: "ev", ToolCallID: "t1"})
	es := p.waitLog("ev", "the run goes on", func(es []events.Entry) bool { return lastText(es) == "finished" })
	if got := resultIDs(es); got != "t1,t2,t3" {
		t.Fatalf("results %s", got)
	}
}

// TestKillNineWhileWaiting kills the orchestrator process that owns a
// waiting session; the approval goes to the survivor, which brings the
// session back from the log and finishes the batch.
func TestKillNineWhileWaiting(t *testing.T) {
	p := newPlatform(t)
	scriptPath := t.TempDir() + "/script.json"
	if err := os.WriteFile(scriptPath, []byte(approvalScript), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startChild(t, p, scriptPath, "a")
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "k9", Tools: []string{"bash", "ls"}, Approvals: askBash})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "k9", Text: "one ask"})
	p.waitLog("k9", "waiting", func(es []events.Entry) bool {
		return countType(es, events.EntryApprovalRequested) == 1 && countType(es, events.EntryToolResultHeld) == 2
	})
	startChild(t, p, scriptPath, "b")
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait() // "signal: killed", as sent
	p.send(events.Command{ID: "c3", Type: events.CmdApprove, SessionID: "k9", ToolCallID: "t1", Principal: "key:erin"})
	es := p.waitLog("k9", "the survivor finished the batch", func(es []events.Entry) bool { return lastText(es) == "finished" })
	if got := resultIDs(es); got != "t1,t2,t3" {
		t.Fatalf("results %s, want t1,t2,t3", got)
	}
	if n := countType(es, events.EntryTurnInterrupted); n != 0 {
		t.Fatalf("%d turn_interrupted entries: the wait was closed instead of resumed", n)
	}
	if rs := results(es); rs[0].IsError || !strings.Contains(rs[0].Content.Text(), "asked") {
		t.Fatalf("the approved call's result = %q", rs[0].Content.Text())
	}
}

// TestTenantDefaultPolicy: a session without a policy of its own asks as
// its tenant's default says; one with its own policy does not see it.
func TestTenantDefaultPolicy(t *testing.T) {
	p := newPlatform(t)
	if err := p.ledger().SetApprovals(context.Background(), events.DefaultTenant, askBash); err != nil {
		t.Fatal(err)
	}
	p.startApprovals("o1", approvalScript)
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "td", Tools: []string{"bash", "ls"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "td", Text: "two asks"})
	p.waitRequests("td", 2)
	own := &events.Approvals{Tools: map[string]string{"*": events.PolicyAllow}}
	p.send(events.Command{ID: "d1", Type: events.CmdCreate, SessionID: "to", Tools: []string{"bash", "ls"}, Approvals: own})
	p.send(events.Command{ID: "d2", Type: events.CmdPrompt, SessionID: "to", Text: "two asks"})
	es := p.waitLog("to", "ran without asking", func(es []events.Entry) bool { return lastText(es) == "finished" })
	if n := countType(es, events.EntryApprovalRequested); n != 0 {
		t.Fatalf("%d requests in a session whose own policy allows everything", n)
	}
}

// TestUnreadableTenantDefaultWaits: a tenant default that cannot be read
// (here a stored value that does not decode; in production a read during
// a NATS election) parks nothing: the call waits, reading the default
// again, and runs once it can be read, with no approval request. Failing
// closed into a request would ask a person about a call no policy asked
// for, and park it until someone answers.
func TestUnreadableTenantDefaultWaits(t *testing.T) {
	p := newPlatform(t)
	ctx := context.Background()
	p.ledger() // creates the buckets
	kv, err := p.js.KeyValue(ctx, provision.BudgetBuckets(p.n, 1)[0].Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "approvals."+events.DefaultTenant, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	retrying := &onMessage{msg: "cannot read the tenant's default approval policy; reading it again", seen: make(chan struct{}), next: refusedMoves{t}}
	p.startApprovalsLogging("o1", approvalScript, slog.New(retrying))
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "ud", Tools: []string{"bash", "ls"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "ud", Text: "one ask"})
	<-retrying.seen // the first call's decision waits for the default
	if err := p.ledger().SetApprovals(ctx, events.DefaultTenant, nil); err != nil {
		t.Fatal(err)
	}
	es := p.waitLog("ud", "the batch ran", func(es []events.Entry) bool { return lastText(es) == "finished" })
	if n := countType(es, events.EntryApprovalRequested); n != 0 {
		t.Fatalf("%d approval requests: an unreadable default parked calls", n)
	}
	if got := resultIDs(es); got != "t1,t2,t3" {
		t.Fatalf("results %s, want t1,t2,t3", got)
	}
}

// onMessage closes seen at the first record with message msg and passes
// every record on to next.
type onMessage struct {
	msg  string
	seen chan struct{}
	once sync.Once
	next slog.Handler
}

func (h *onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h *onMessage) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}
func (h *onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *onMessage) WithGroup(string) slog.Handler      { return h }

// TestSetApprovalsAppliesToTheNextCalls: set_approvals is recorded as an
// approvals_change entry and decides the calls prepared after it; a
// second one that allows everything lets them run again.
func TestSetApprovalsAppliesToTheNextCalls(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", approvalScript)
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "sa", Tools: []string{"bash", "ls"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "sa", Text: "two asks"})
	es := p.waitLog("sa", "ran without a policy", func(es []events.Entry) bool { return lastText(es) == "finished" })
	if n := countType(es, events.EntryApprovalRequested); n != 0 {
		t.Fatalf("%d requests before any policy", n)
	}
	p.send(events.Command{ID: "c3", Type: events.CmdSetApprovals, SessionID: "sa", Approvals: askBash, Principal: "key:alice"})
	p.send(events.Command{ID: "c4", Type: events.CmdPrompt, SessionID: "sa", Text: "two asks"})
	es = p.waitRequests("sa", 2)
	var change *events.Entry
	for i := range es {
		if es[i].Type == events.EntryApprovalsChange {
			change = &es[i]
		}
	}
	if change == nil || change.CommandID != "c3" || change.Principal != "key:alice" || change.Approvals.Decide("bash") != events.PolicyAsk {
		t.Fatalf("the policy change is recorded as %+v", change)
	}
	p.send(events.Command{ID: "c5", Type: events.CmdDeny, SessionID: "sa", ToolCallID: "t1", Reason: "no"})
	p.send(events.Command{ID: "c6", Type: events.CmdDeny, SessionID: "sa", ToolCallID: "t2", Reason: "no"})
	p.waitLog("sa", "denied and finished", func(es []events.Entry) bool { return named("c6")(es) && lastText(es) == "finished" })
	p.send(events.Command{ID: "c7", Type: events.CmdSetApprovals, SessionID: "sa", Approvals: &events.Approvals{Tools: map[string]string{"*": events.PolicyAllow}}})
	p.send(events.Command{ID: "c8", Type: events.CmdPrompt, SessionID: "sa", Text: "two asks"})
	es = p.waitLog("sa", "ran after allow", func(es []events.Entry) bool { return named("c8")(es) && lastText(es) == "finished" })
	if n := countType(es, events.EntryApprovalRequested); n != 2 {
		t.Fatalf("%d requests after the policy allowed everything, want the earlier 2", n)
	}
}

// TestWaitingSurvivesARestart: the orchestrator shuts down gracefully
// while a session waits (a restart, a rolling upgrade); a new one starts,
// the answer comes, and the batch finishes from the log, resumed, not
// closed as interrupted.
func TestWaitingSurvivesARestart(t *testing.T) {
	p := newPlatform(t)
	o, stop := p.startApprovals("o1", approvalScript)
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "rs", Tools: []string{"bash", "ls"}, Approvals: askBash})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "rs", Text: "one ask"})
	p.waitLog("rs", "held", func(es []events.Entry) bool { return countType(es, events.EntryToolResultHeld) == 2 })
	waitState(t, o, "rs", lifecycle.Waiting, lifecycle.Shrunk)
	stop()
	p.startApprovals("o2", approvalScript)
	p.send(events.Command{ID: "c3", Type: events.CmdApprove, SessionID: "rs", ToolCallID: "t1", Principal: "key:frank"})
	es := p.waitLog("rs", "the run goes on after the restart", func(es []events.Entry) bool { return lastText(es) == "finished" })
	if got := resultIDs(es); got != "t1,t2,t3" {
		t.Fatalf("results %s, want t1,t2,t3", got)
	}
	if n := countType(es, events.EntryTurnInterrupted); n != 0 {
		t.Fatalf("%d turn_interrupted entries: the wait was closed instead of resumed", n)
	}
	if n := countType(es, events.EntryApprovalRequested); n != 1 {
		t.Fatalf("%d requests: the restart asked again", n)
	}
}
