package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// failedFuture is a publish whose outcome is already known: an error.
type failedFuture struct{ err chan error }

func newFailedFuture(err error) failedFuture {
	f := failedFuture{err: make(chan error, 1)}
	f.err <- err
	return f
}

func (f failedFuture) Ok() <-chan *jetstream.PubAck { return nil }
func (f failedFuture) Err() <-chan error            { return f.err }
func (f failedFuture) Msg() *nats.Msg               { return nil }

// A command must not be marked done while its run may have no running
// mark: a set mark whose publish failed (the connection to a killed node)
// or was never sent is written again before markStored reports it stored;
// if it cannot be (the partition stops), markStored says so and the command
// stays unfinished for the next owner. A failed clear does not matter.
func TestMarkStoredWritesAFailedSetMarkAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, js := natstest.RunProvisioned(t, events.Names{}, provision.Options{})
	kv, err := js.KeyValue(ctx, events.Names{}.CheckpointsBucket())
	if err != nil {
		t.Fatal(err)
	}
	o := &Orchestrator{log: slog.New(slog.DiscardHandler), checkpoints: kv}
	o.cfg.Instance = "o1"
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	p := &partition{o: o, n: 3, ctx: pctx}
	disconnected := newFailedFuture(nats.ErrDisconnected)

	for _, tc := range []struct {
		name string
		mark *markState
	}{
		{"publish failed", &markState{f: disconnected, running: true}},
		{"never sent", &markState{running: true}},
	} {
		sid := "s-" + tc.name[:5]
		a := newActor(o, p, events.DefaultRef(sid))
		a.mark.Store(tc.mark)
		if !a.markStored() {
			t.Fatalf("%s: markStored = false with the server up", tc.name)
		}
		e, err := kv.Get(ctx, runKey(3, events.DefaultRef(sid)))
		if err != nil || string(e.Value()) != "o1" {
			t.Fatalf("%s: mark %s after markStored: %v %v, want o1", tc.name, runKey(3, events.DefaultRef(sid)), e, err)
		}
		if a.mark.Load() != nil {
			t.Errorf("%s: the stored mark is still remembered", tc.name)
		}
	}

	a := newActor(o, p, events.DefaultRef("s-clear"))
	a.mark.Store(&markState{f: newFailedFuture(nats.ErrDisconnected)})
	if !a.markStored() {
		t.Error("a failed clear: markStored = false, want true (a stale mark is harmless)")
	}
	if _, err := kv.Get(ctx, runKey(3, events.DefaultRef("s-clear"))); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("a failed clear wrote a mark: %v", err)
	}

	stop() // the partition is lost: the mark cannot be written any more
	a = newActor(o, p, events.DefaultRef("s-stopped"))
	a.mark.Store(&markState{running: true})
	if a.markStored() {
		t.Error("markStored = true though the mark could not be written")
	}
}
