package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/nats-io/nats.go/jetstream"
)

// An error message with a retry mark keeps the run running; the reply
// after it settles it.
func TestRunStateRunsThroughARetry(t *testing.T) {
	msg := func(role string, stop events.StopReason, cid string) events.Entry {
		return events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: role, StopReason: stop, CommandID: cid}}
	}
	es := []events.Entry{msg(events.RoleUser, "", "p1"), msg(events.RoleAssistant, events.StopError, "")}
	if st := runState(es, "p1"); st.State != stateSettled {
		t.Fatalf("after an error that is not retried: %s", st.State)
	}
	es[1].Retry = &events.RetryMark{Attempt: 1, DelayMs: 2000, Code: events.RetryTransient}
	if st := runState(es, "p1"); st.State != stateRunning || st.Message != nil {
		t.Fatalf("while a retry backs off: %+v", st)
	}
	es = append(es, msg(events.RoleAssistant, events.StopEnd, ""))
	if st := runState(es, "p1"); st.State != stateSettled || st.Message == nil {
		t.Fatalf("after the retried reply: %+v", st)
	}
}

// A reply with a compaction mark keeps the run running while the harness
// compacts; the compaction entry settles it with that reply, and a
// turn_interrupted entry closes a compaction never made.
func TestRunStateRunsThroughACompactionAfterTheReply(t *testing.T) {
	msg := func(role string, stop events.StopReason, cid string) events.Entry {
		return events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: role, StopReason: stop, CommandID: cid}}
	}
	reply := msg(events.RoleAssistant, events.StopEnd, "")
	reply.Retry = &events.RetryMark{Code: events.RetryCompaction}
	es := []events.Entry{msg(events.RoleUser, "", "p1"), reply,
		{Type: events.EntryModelChange, Provider: "scripted", ModelID: "y"}}
	if st := runState(es, "p1"); st.State != stateRunning || st.Message != nil {
		t.Fatalf("while the compaction runs: %+v", st)
	}
	done := append(es[:3:3], events.Entry{Type: events.EntryCompaction, Summary: "s", FirstKeptEntryID: "x"})
	if st := runState(done, "p1"); st.State != stateSettled || st.Message != reply.Message || st.Interrupted {
		t.Fatalf("after the compaction: %+v", st)
	}
	cut := append(es[:3:3], events.Entry{Type: events.EntryTurnInterrupted, Reason: "crash"})
	if st := runState(cut, "p1"); st.State != stateSettled || !st.Interrupted {
		t.Fatalf("after a turn_interrupted: %+v", st)
	}
	// A compaction in the middle of a run does not settle it.
	mid := []events.Entry{msg(events.RoleUser, "", "p2"), msg(events.RoleAssistant, events.StopToolUse, ""),
		msg(events.RoleToolResult, "", ""), {Type: events.EntryCompaction, Summary: "s", FirstKeptEntryID: "x"}}
	if st := runState(mid, "p2"); st.State != stateRunning {
		t.Fatalf("after a compaction mid-run: %+v", st)
	}
}

// A refusal where the session has no log is answered like one in the log:
// 409 with the reason under ?wait=applied, rejected in the command status.
func TestRefusalWithoutALog(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		l, err := session.NewJetStreamLog(context.Background(), c.JetStream)
		if err != nil {
			t.Fatal(err)
		}
		c.Log = l
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv, err := f.js.KeyValue(ctx, f.n.OutcomesBucket())
	if err != nil {
		t.Fatalf("the gateway did not create the outcomes bucket: %v", err)
	}
	// An orchestrator that refuses every command, without a log.
	cons, err := f.js.OrderedConsumer(ctx, f.n.CommandsStream(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		cmd, err := events.DecodeCommand(m.Data())
		if err != nil {
			t.Errorf("orchestrator got an invalid command: %v", err)
			return
		}
		r := events.Outcome{SessionID: cmd.SessionID, CommandID: cmd.ID, Type: cmd.Type, Code: "invalid",
			Reason: "workspace: it is outside", Timestamp: events.FormatTime(time.Now())}
		data, _ := r.MarshalJSON()
		if _, err := kv.Put(ctx, events.OutcomeKey(events.DefaultRef(cmd.SessionID), cmd.ID), data); err != nil && ctx.Err() == nil {
			t.Errorf("put: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()

	code, out := f.do(t, "POST", "/v1/sessions?wait=applied", `{"id":"n1","commandId":"c1","workspace":"elsewhere"}`)
	if code != 409 || errMsg(out) != "workspace: it is outside" || out["reason"] != "invalid" || out["commandId"] != "c1" {
		t.Fatalf("refused create = %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/sessions/n1/commands/c1", "")
	if code != 200 || out["state"] != "rejected" || out["reason"] != "workspace: it is outside" || out["code"] != "invalid" {
		t.Fatalf("status of the refused create = %d %v", code, out)
	}
	// Not refused and no session: still "no session".
	if code, out := f.do(t, "GET", "/v1/sessions/n1/commands/c2", ""); code != 404 || !strings.Contains(errMsg(out), `no session "n1"`) {
		t.Fatalf("status of an unknown command = %d %v", code, out)
	}
}
