package session_test

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/session/logtest"
)

// A read from the start that finds a long tail writes a snapshot; the next
// read takes the entries it covers from the snapshot, not from the stream.
// A snapshot that does not fit the log is ignored.
func TestSnapshotsServeColdLoads(t *testing.T) {
	ctx := context.Background()
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	l, err := session.NewJetStreamLog(ctx, js, session.WithSnapshotEvery(10))
	if err != nil {
		t.Fatal(err)
	}
	sid := "snap"
	recs := logtest.AppendChain(ctx, t, l, events.DefaultRef(sid), nil, 25)
	got, err := l.Read(ctx, events.DefaultRef(sid), 0) // 25 >= 10: writes the snapshot
	if err != nil || len(got) != 25 {
		t.Fatalf("first read: %d records, %v", len(got), err)
	}
	obs, err := js.ObjectStore(ctx, "cairn_snapshots")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.GetInfo(ctx, events.DefaultRef(sid).String()); err != nil {
		t.Fatalf("no snapshot after a long read: %v", err)
	}
	more := logtest.AppendChain(ctx, t, l, events.DefaultRef(sid), &recs[24], 3)
	all := append(recs, more...)

	// Delete an entry the snapshot covers from the stream: a read through
	// the snapshot still has it, the auditor's read of the stream does not.
	st, err := js.Stream(ctx, events.Names{}.SessionsStream())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, recs[5].Seq); err != nil {
		t.Fatal(err)
	}
	got, err = l.Read(ctx, events.DefaultRef(sid), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(all) || got[5].Entry.ID != recs[5].Entry.ID || got[27].Entry.ID != more[2].Entry.ID {
		t.Fatalf("read through the snapshot: %d records, want %d", len(got), len(all))
	}
	raw, err := l.ReadStream(ctx, events.DefaultRef(sid))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != len(all)-1 {
		t.Fatalf("ReadStream: %d records, want %d", len(raw), len(all)-1)
	}
	if probs := session.VerifyChain(raw); len(probs) != 1 || probs[0].Kind != session.ProblemRemoved {
		t.Fatalf("verifier on the stream after a deletion: %v", probs)
	}

	// A snapshot of another log (here: another session's) is ignored.
	logtest.AppendChain(ctx, t, l, events.DefaultRef("other"), nil, 12)
	if _, err := l.Read(ctx, events.DefaultRef("other"), 0); err != nil {
		t.Fatal(err)
	}
	data, err := obs.GetBytes(ctx, events.DefaultRef("other").String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, events.DefaultRef("third").String(), data); err != nil {
		t.Fatal(err)
	}
	third := logtest.AppendChain(ctx, t, l, events.DefaultRef("third"), nil, 4)
	got, err = l.Read(ctx, events.DefaultRef("third"), 0)
	if err != nil || len(got) != 4 || got[0].Entry.ID != third[0].Entry.ID {
		t.Fatalf("read with a foreign snapshot: %d records, %v", len(got), err)
	}
}

// A settled writer's Snapshot makes the next load read no tail: delete an
// entry from the stream after the snapshot, and a load still has it.
func TestSessionSnapshot(t *testing.T) {
	ctx := context.Background()
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	l, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(ctx, l, events.Entry{ID: "settled"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.Append(ctx, logtest.UserEntry(id, "", id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, events.Names{}.SessionsStream())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, s.Records()[2].Seq); err != nil {
		t.Fatal(err)
	}
	re, err := session.Load(ctx, l, events.DefaultRef("settled"))
	if err != nil {
		t.Fatal(err)
	}
	if len(re.Records()) != 4 || re.Records()[2].Entry.ID != "b" {
		t.Fatalf("load after a snapshot: %d records", len(re.Records()))
	}
	// The memory log keeps no snapshots: Snapshot is a no-op there.
	m, err := session.Create(ctx, session.NewMemLog(0, nil), events.Entry{ID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
}
