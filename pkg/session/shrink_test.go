package session_test

import (
	"context"
	"github.com/cairn-agents/cairn/pkg/events"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/session"
)

// A shrunk session answers exactly what a freshly loaded one does, keeps
// appending on its chain, and snapshots the same bytes.
func TestShrunkSessionAnswersAsLoaded(t *testing.T) {
	ctx := context.Background()
	// A small payload limit, so that one entry keeps a blob reference.
	l := session.NewMemLog(2048, nil)
	var snap []session.Record
	s := newSession(t, snapshotSpy{Log: l, got: &snap}, "s1")
	mustAppend(t, s, userMsg("u1", "hello"))
	a1 := mustAppend(t, s, userMsg("u2", "a branch"))
	mustAppend(t, s, userMsg("big", strings.Repeat("large tool output ", 300)))
	if _, err := s.SetLabel(ctx, a1.Entry.ID, "here"); err != nil {
		t.Fatal(err)
	}
	target := "u1"
	if _, err := s.MoveTo(ctx, &target); err != nil {
		t.Fatal(err)
	}
	loaded := func() *session.Session {
		t.Helper()
		ls, err := session.Load(ctx, l, events.DefaultRef("s1"))
		if err != nil {
			t.Fatal(err)
		}
		return ls
	}
	want := loaded()
	wantPath, _ := want.Path(*want.Leaf())

	s.Shrink()
	if !s.Shrunk() || s.Len() != want.Len() || s.LastSeq() != want.LastSeq() || *s.Leaf() != *want.Leaf() {
		t.Fatalf("shrunk: %v, len %d/%d, last seq %d/%d, leaf %v/%v", s.Shrunk(), s.Len(), want.Len(), s.LastSeq(), want.LastSeq(), *s.Leaf(), *want.Leaf())
	}
	if got := s.Entries(); !reflect.DeepEqual(got, want.Entries()) {
		t.Fatalf("entries after shrinking differ from a load:\n%+v\nwant\n%+v", got, want.Entries())
	}
	if s.Shrunk() {
		t.Fatal("still shrunk after Entries")
	}
	s.Shrink()
	path, err := s.Path(*s.Leaf())
	if err != nil || !reflect.DeepEqual(path, wantPath) {
		t.Fatalf("path after shrinking = %+v, %v; want %+v", path, err, wantPath)
	}
	if big := want.Records()[3]; !strings.Contains(string(big.Data), `"blob":`) {
		t.Fatalf("the large entry was stored whole (%d bytes); the test needs a blob reference", len(big.Data))
	}

	// Appends go on from the shrunk state: refused and accepted alike.
	s.Shrink()
	if _, err := s.Append(ctx, userMsg("u1", "again")); err == nil {
		t.Fatal("a duplicate id was accepted by a shrunk session")
	}
	s.Shrink()
	mustAppend(t, s, userMsg("u3", "after"))
	recs := loaded().Records()
	if errs := session.VerifyChain(recs); len(errs) != 0 {
		t.Fatalf("chain after appending to a shrunk session: %v", errs)
	}
	if p := recs[len(recs)-1].Entry.ParentID; p == nil || *p != "u1" {
		t.Fatalf("appended under %v, want u1 (the leaf)", p)
	}

	// A snapshot of a shrunk session holds the stored bytes.
	s.Shrink()
	if err := s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	got := snap
	if len(got) != len(recs) {
		t.Fatalf("snapshot of %d records, want %d", len(got), len(recs))
	}
	for i := range got {
		if string(got[i].Data) != string(recs[i].Data) || got[i].Seq != recs[i].Seq || got[i].Digest != recs[i].Digest {
			t.Fatalf("snapshot record %d differs from the log", i)
		}
	}
}

type snapshotSpy struct {
	session.Log
	got *[]session.Record
}

func (s snapshotSpy) WriteSnapshot(_ context.Context, _ events.SessionRef, recs []session.Record) error {
	*s.got = append([]session.Record(nil), recs...)
	return nil
}
