package orchestrator

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/session"
)

// flakyLog is a session log whose next appends fail, as they do while
// NATS elects a stream leader.
type flakyLog struct {
	session.Log
	fail atomic.Int32
}

func (l *flakyLog) Append(ctx context.Context, sid events.SessionRef, expect uint64, e events.Entry) (session.Record, error) {
	if l.fail.Add(-1) >= 0 {
		return session.Record{}, errors.New("nats: no responders available for request")
	}
	return l.Log.Append(ctx, sid, expect, e)
}

// A recovery whose append fails is tried again: the turn a crash left
// open (a tool call without a result) gets its result and is closed,
// though no command arrives for the session after the one that loaded it,
// and that command is applied after the recovery.
func TestAFailedRecoveryIsRetried(t *testing.T) {
	p := newPlatform(t)
	ctx := context.Background()
	s, err := session.Create(ctx, p.log, events.Entry{ID: "open", Model: "scripted/test", Cwd: "open"})
	if err != nil {
		t.Fatal(err)
	}
	call := events.Block{Type: events.BlockToolCall, ID: "c1", Name: "ls", Arguments: []byte(`{}`)}
	for _, e := range []events.Entry{
		{Type: events.EntryMessage, CommandID: "p0", Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("list"), CommandID: "p0"}},
		{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse, Content: events.Content{Blocks: []events.Block{call}}}},
	} {
		if _, err := s.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	user := s.Entries()[1].ID
	log := &flakyLog{Log: p.log}
	log.fail.Store(2) // the first recovery's result, and the second's
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	o, err := New(Config{Conn: p.nc, Log: log, Instance: "o1", Partitions: 4, LeaseTTL: testLeaseTTL,
		Models: scriptedModels{scripted.New(sc)}, DefaultModel: "scripted/test", Logger: failOnRefusedMove(t)})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Run(t, ctx, "orchestrator", o.Run)
	p.send(events.Command{ID: "l1", Type: events.CmdLabel, SessionID: "open", EntryID: &user, Label: "asked"})
	es := p.waitLog("open", "the turn closed and the label applied", func(es []events.Entry) bool {
		return named("l1")(es) && len(es) > 0 && es[len(es)-1].Type == events.EntryLabel
	})
	var results, closed int
	for _, e := range es {
		if e.Message != nil && e.Message.Role == events.RoleToolResult && e.Message.ToolCallID == "c1" {
			results++
		}
		if e.Type == events.EntryTurnInterrupted {
			closed++
		}
	}
	if results != 1 || closed != 1 {
		t.Fatalf("call c1 has %d results and the turn %d turn_interrupted entries, want 1 and 1: %+v", results, closed, es)
	}
	if n := log.fail.Load(); n > -1 {
		t.Fatalf("the log still had %d failures to give: the recovery did not meet them", n+1)
	}
}
