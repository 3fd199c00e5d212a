package provision_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/session/logtest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// An installation provisioned by the layout before tenants, holding a
// session: Apply refuses it and changes nothing; Apply with Migrate moves
// the session to the default tenant with its stored bytes (the hash chain
// still verifies), leaves the streams in the tenant layout, and a second
// run changes nothing.
func TestMigrateTheLayoutBeforeTenants(t *testing.T) {
	ctx := context.Background()
	_, js := natstest.JetStream(t, natstest.RunServer(t).Server)
	n := events.Names{}
	const partitions = 4
	old := provision.SessionsStream(n, 1)
	old.Subjects = []string{n.LegacySessions()}
	if _, err := js.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	oldCmds := provision.CommandsStream(n, partitions, 1, provision.CommandsMaxAge)
	legacyCmd := n.LegacyPerSession()[n.CommandsStream()]
	oldCmds.Subjects = []string{legacyCmd}
	oldCmds.SubjectTransform = &jetstream.SubjectTransformConfig{Source: legacyCmd, Destination: n.LegacyStoredCommands(partitions)}
	if _, err := js.CreateStream(ctx, oldCmds); err != nil {
		t.Fatal(err)
	}
	// The old log: a session built in memory, its stored bytes published
	// as the old layout did (cairn.session.<sid>, Msg-Id <sid>.<entry id>).
	mem := session.NewMemLog(0, nil)
	s, err := session.Create(ctx, mem, events.Entry{ID: "s1", Model: "scripted/a"})
	if err != nil {
		t.Fatal(err)
	}
	parent := ""
	for _, id := range []string{"u1", "a1", "u2"} {
		if _, err := s.Append(ctx, logtest.UserEntry(id, parent, "text of "+id)); err != nil {
			t.Fatal(err)
		}
		parent = id
	}
	want := s.Records()
	for _, r := range want {
		m := &nats.Msg{Subject: "cairn.session.s1", Data: r.Data, Header: nats.Header{}}
		m.Header.Set(events.HeaderMsgID, "s1."+r.Entry.ID)
		m.Header.Set(session.HeaderDigest, r.Digest)
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// A command stored by the old transform stays, for audit.
	if _, err := js.Publish(ctx, "cairn.cmd.s1", []byte(`{"id":"c0","type":"prompt","sessionId":"s1","text":"hi"}`)); err != nil {
		t.Fatal(err)
	}

	opts := provision.Options{Partitions: partitions}
	_, err = provision.Apply(ctx, js, n, opts)
	var le *provision.LegacyLayoutError
	if !errors.As(err, &le) || le.Sessions != 1 || !errors.Is(err, provision.ErrIncompatible) {
		t.Fatalf("Apply on the old layout = %v, want a LegacyLayoutError naming 1 session", err)
	}
	if cfg := streamCfg(t, js, n.SessionsStream()); !slices.Equal(cfg.Subjects, old.Subjects) {
		t.Fatalf("a refused Apply changed the subjects to %v", cfg.Subjects)
	}

	opts.Migrate = true
	for run := 1; run <= 2; run++ {
		if _, err := provision.Apply(ctx, js, n, opts); err != nil {
			t.Fatalf("migrating, run %d: %v", run, err)
		}
		if cfg := streamCfg(t, js, n.SessionsStream()); !slices.Equal(cfg.Subjects, []string{n.AllSessions()}) {
			t.Fatalf("run %d: sessions stream subjects %v", run, cfg.Subjects)
		}
		if cfg := streamCfg(t, js, n.CommandsStream()); cfg.SubjectTransform == nil || cfg.SubjectTransform.Destination != n.StoredCommands(partitions) {
			t.Fatalf("run %d: commands transform %+v", run, cfg.SubjectTransform)
		}
		l, err := session.NewJetStreamLog(ctx, js, session.WithCreate(false))
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.ReadStream(ctx, events.DefaultRef("s1"))
		if err != nil || len(got) != len(want) {
			t.Fatalf("run %d: the default tenant's s1 holds %d records (%v), want %d", run, len(got), err, len(want))
		}
		for i := range got {
			if string(got[i].Data) != string(want[i].Data) {
				t.Fatalf("run %d: record %d changed in the copy", run, i)
			}
		}
		if probs := session.VerifyChain(got); len(probs) != 0 {
			t.Fatalf("run %d: chain after migrating: %v", run, probs)
		}
		loaded, err := session.Load(ctx, l, events.DefaultRef("s1"))
		if err != nil || loaded.Ref() != events.DefaultRef("s1") || run == 1 && *loaded.Leaf() != "u2" {
			t.Fatalf("run %d: Load: %v", run, err)
		}
		// The session keeps going in the new layout.
		if run == 1 {
			if _, err := loaded.Append(ctx, logtest.UserEntry("u3", "u2", "after")); err != nil {
				t.Fatalf("append after migrating: %v", err)
			}
			want = loaded.Records()
		}
	}
	st, err := js.Stream(ctx, n.SessionsStream())
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is deleted: the old messages stay, on no subject the stream
	// takes any more.
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != uint64(2*4+1) {
		t.Fatalf("sessions stream after migrating: %+v, %v; want the 4 old, 4 copied and 1 new messages", info.State, err)
	}
	cs, err := js.Stream(ctx, n.CommandsStream())
	if err != nil {
		t.Fatal(err)
	}
	if info, err := cs.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("commands after migrating: %+v, %v; the old command is kept", info.State, err)
	}
}

func streamCfg(t *testing.T, js jetstream.JetStream, name string) jetstream.StreamConfig {
	t.Helper()
	s, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().Config
}
