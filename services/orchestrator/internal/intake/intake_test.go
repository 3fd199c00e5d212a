package intake

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

const partitions = 4

type env struct {
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	n   events.Names
	ctx context.Context
}

func newEnv(t *testing.T) *env {
	ctx := context.Background()
	n := events.Names{}
	_, _, js := natstest.RunProvisioned(t, n, provision.Options{Partitions: partitions})
	kv, err := js.KeyValue(ctx, n.CheckpointsBucket())
	if err != nil {
		t.Fatal(err)
	}
	return &env{js: js, kv: kv, n: n, ctx: ctx}
}

func (e *env) publish(t *testing.T, sid, id string) {
	t.Helper()
	data, _ := json.Marshal(events.Command{V: 1, ID: id, Type: events.CmdAbort, SessionID: sid})
	if _, err := e.js.Publish(e.ctx, e.n.CommandSubject(events.DefaultRef(sid)), data); err != nil {
		t.Fatal(err)
	}
}

// partitionOf finds where the server put sid's commands.
func (e *env) partitionOf(t *testing.T, sid string) int {
	t.Helper()
	st, _ := e.js.Stream(e.ctx, e.n.CommandsStream())
	for p := 0; p < partitions; p++ {
		if _, err := st.GetLastMsgForSubject(e.ctx, e.n.StoredCommandSubject(p, events.DefaultRef(sid))); err == nil {
			return p
		}
	}
	t.Fatalf("no partition holds %s", sid)
	return -1
}

type run struct {
	in     *Intake
	got    chan Command
	cancel context.CancelFunc
	done   chan error
}

func (e *env) start(t *testing.T, p int) *run {
	t.Helper()
	r := &run{got: make(chan Command, 100), done: make(chan error, 1)}
	in, err := New(Config{JetStream: e.js, Stream: e.n.CommandsStream(), Filter: e.n.PartitionCommands(p),
		Checkpoints: e.kv, Key: fmt.Sprintf("cmd.%d", p), Interval: time.Hour, Deliver: func(c Command) { r.got <- c }})
	if err != nil {
		t.Fatal(err)
	}
	r.in = in
	ctx, cancel := context.WithCancel(e.ctx)
	r.cancel = cancel
	go func() { r.done <- in.Run(ctx) }()
	return r
}

func (r *run) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatal(err)
	}
}

func (r *run) next(t *testing.T) Command {
	t.Helper()
	select {
	case c := <-r.got:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no command delivered within 10s")
		return Command{}
	}
}

func TestPartitionOrderAndCheckpoint(t *testing.T) {
	e := newEnv(t)
	e.publish(t, "alpha", "a1")
	p := e.partitionOf(t, "alpha")
	// Find another session in the same partition and one outside it.
	var same, other string
	for i := 0; same == "" || other == ""; i++ {
		sid := fmt.Sprintf("s%d", i)
		e.publish(t, sid, "probe-"+sid)
		if e.partitionOf(t, sid) == p {
			if same == "" {
				same = sid
			}
		} else if other == "" {
			other = sid
		}
	}
	e.publish(t, "alpha", "a2")
	e.publish(t, same, "b1")
	e.publish(t, other, "x1")
	e.publish(t, "alpha", "a3")

	r := e.start(t, p)
	var ids []string
	var seqs []uint64
	for len(ids) == 0 || ids[len(ids)-1] != "a3" {
		c := r.next(t)
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		if c.Session.ID != c.Cmd.SessionID {
			t.Fatalf("session %q vs command's %q", c.Session, c.Cmd.SessionID)
		}
		if c.Cmd.ID == "x1" {
			t.Fatal("a command of another partition was delivered")
		}
		ids = append(ids, c.Cmd.ID)
		seqs = append(seqs, c.Seq)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("out of order: %v", seqs)
		}
	}
	// Finish everything but a2, out of order; the checkpoint stops at a2.
	var a2 uint64
	for i := len(ids) - 1; i >= 0; i-- {
		if ids[i] == "a2" {
			a2 = seqs[i]
			continue
		}
		r.in.Done(seqs[i])
	}
	r.stop(t)
	if cp, _ := r.in.Checkpoint(e.ctx); cp != a2 {
		t.Fatalf("checkpoint %d, want %d (a2 unfinished)", cp, a2)
	}
	// The next owner starts at a2 and sees it again, then the rest in order.
	r2 := e.start(t, p)
	defer r2.stop(t)
	if c := r2.next(t); c.Cmd.ID != "a2" {
		t.Fatalf("after restart first command %s, want a2", c.Cmd.ID)
	}
}

func TestInvalidCommandIsDeliveredWithError(t *testing.T) {
	e := newEnv(t)
	e.publish(t, "s1", "ok")
	p := e.partitionOf(t, "s1")
	if _, err := e.js.Publish(e.ctx, e.n.CommandSubject(events.DefaultRef("s1")), []byte(`{"type":"dance","id":"c9"}`)); err != nil {
		t.Fatal(err)
	}
	r := e.start(t, p)
	defer r.stop(t)
	r.next(t)
	c := r.next(t)
	if c.Err == nil || c.Session != events.DefaultRef("s1") {
		t.Fatalf("got %+v, want a decode error for session s1", c)
	}
}

// An Intake run again after a failure goes on after what it delivered.
func TestRunAgainDeliversNothingTwice(t *testing.T) {
	e := newEnv(t)
	e.publish(t, "s1", "a1")
	p := e.partitionOf(t, "s1")
	r := e.start(t, p)
	if c := r.next(t); c.Cmd.ID != "a1" {
		t.Fatalf("first = %s", c.Cmd.ID)
	}
	r.stop(t) // a1 is never finished: a new Intake would read it again
	e.publish(t, "s1", "a2")
	defer kittest.Run(t, e.ctx, "intake", r.in.Run)()
	if c := r.next(t); c.Cmd.ID != "a2" {
		t.Fatalf("after running again got %s, want a2 (a1 was delivered already)", c.Cmd.ID)
	}
}
