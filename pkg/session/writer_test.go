package session_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/session/logtest"
)

func userMsg(id, text string) events.Entry {
	e := logtest.UserEntry(id, "", text)
	e.ParentID = nil
	return e
}

func newSession(t *testing.T, l session.Log, sid string) *session.Session {
	t.Helper()
	s, err := session.Create(context.Background(), l, events.Entry{ID: sid, Model: "scripted/test", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustAppend(t *testing.T, s *session.Session, e events.Entry) session.Record {
	t.Helper()
	r, err := s.Append(context.Background(), e)
	if err != nil {
		t.Fatalf("append %s: %v", e.ID, err)
	}
	return r
}

func leafOf(s *session.Session) string {
	if l := s.Leaf(); l != nil {
		return *l
	}
	return "<nil>"
}

func TestSessionCreateAppendLoad(t *testing.T) {
	ctx := context.Background()
	l := session.NewMemLog(0, nil)
	s := newSession(t, l, "s1")
	if h := s.Header(); h.Type != events.EntrySession || h.Version != events.PiVersion || h.Timestamp == "" || h.Model != "scripted/test" {
		t.Fatalf("header = %+v", h)
	}
	if _, err := session.Create(ctx, l, events.Entry{ID: "s1"}); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("creating s1 again = %v, want ErrConflict", err)
	}
	mustAppend(t, s, userMsg("a", "hello"))
	mustAppend(t, s, userMsg("b", "world"))
	if leafOf(s) != "b" {
		t.Fatalf("leaf = %s, want b", leafOf(s))
	}
	got, err := session.Load(ctx, l, events.DefaultRef("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.LastSeq() != s.LastSeq() || leafOf(got) != "b" || len(got.Records()) != 3 {
		t.Fatalf("loaded seq %d leaf %s records %d; want %d b 3", got.LastSeq(), leafOf(got), len(got.Records()), s.LastSeq())
	}
	path, err := got.Path("b")
	if err != nil || len(path) != 2 || path[0].ID != "a" || *path[1].ParentID != "a" {
		t.Fatalf("path to b = %v, %v", path, err)
	}
	if probs := session.VerifyChain(got.Records()); probs != nil {
		t.Fatalf("chain: %v", probs[0])
	}
	if _, err := session.Load(ctx, l, events.DefaultRef("nobody")); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("load of an unknown session = %v, want ErrNotFound", err)
	}
}

func TestSessionMoveToIsDurable(t *testing.T) {
	ctx := context.Background()
	l := session.NewMemLog(0, nil)
	s := newSession(t, l, "s2")
	for _, id := range []string{"a", "b", "c"} {
		mustAppend(t, s, userMsg(id, id))
	}
	a := "a"
	if _, err := s.MoveTo(ctx, &a); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, userMsg("d", "branch"))
	kids, err := s.Children("a")
	if err != nil || !slices.Equal(kids, []string{"b", "d"}) {
		// the leaf entry hangs under c, the leaf when it was written
		t.Fatalf("children of a = %v, %v; want [b d]", kids, err)
	}
	re, err := session.Load(ctx, l, events.DefaultRef("s2"))
	if err != nil {
		t.Fatal(err)
	}
	if leafOf(re) != "d" {
		t.Fatalf("reloaded leaf = %s, want d", leafOf(re))
	}
	// Moving before the first entry makes the next entry a new root.
	if _, err := re.MoveTo(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if re.Leaf() != nil {
		t.Fatalf("leaf after MoveTo(nil) = %s", leafOf(re))
	}
	r := mustAppend(t, re, userMsg("root2", "again"))
	if r.Entry.ParentID != nil {
		t.Fatalf("entry after MoveTo(nil) has parent %s", *r.Entry.ParentID)
	}
	roots, _ := re.Children("")
	if !slices.Equal(roots, []string{"a", "root2"}) {
		t.Fatalf("roots = %v, want [a root2]", roots)
	}
	again, err := session.Load(ctx, l, events.DefaultRef("s2"))
	if err != nil || leafOf(again) != "root2" {
		t.Fatalf("reloaded leaf = %s, %v; want root2", leafOf(again), err)
	}
}

func TestSessionLabelsAndNavigate(t *testing.T) {
	ctx := context.Background()
	l := session.NewMemLog(0, nil)
	s := newSession(t, l, "s3")
	mustAppend(t, s, userMsg("a", "a"))
	mustAppend(t, s, userMsg("b", "b"))
	if _, err := s.SetLabel(ctx, "a", "start"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetLabel(ctx, "b", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetLabel(ctx, "b", ""); err != nil {
		t.Fatal(err)
	}
	labels, err := s.Labels()
	if err != nil || len(labels) != 1 || labels["a"] != "start" {
		t.Fatalf("labels = %v, %v; want a=start only", labels, err)
	}
	before := leafOf(s)
	a := "a"
	r, err := s.Navigate(ctx, &a, "we tried b", []byte(`{"files":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Entry.Type != events.EntryBranchSummary || *r.Entry.ParentID != "a" || r.Entry.FromID != before || r.Entry.Summary != "we tried b" {
		t.Fatalf("branch summary = %+v", r.Entry)
	}
	if leafOf(s) != r.Entry.ID {
		t.Fatalf("leaf = %s, want the summary %s", leafOf(s), r.Entry.ID)
	}
	re, err := session.Load(ctx, l, events.DefaultRef("s3"))
	if err != nil || leafOf(re) != r.Entry.ID {
		t.Fatalf("reloaded leaf = %s, %v", leafOf(re), err)
	}
	nope := "nope"
	if _, err := s.Navigate(ctx, &nope, "s", nil); !errors.Is(err, session.ErrUnknownEntry) {
		t.Fatalf("navigate to an unknown entry = %v, want ErrUnknownEntry", err)
	}
}

func TestSessionRefusesBadAppends(t *testing.T) {
	ctx := context.Background()
	l := session.NewMemLog(0, nil)
	s := newSession(t, l, "s4")
	mustAppend(t, s, userMsg("a", "a"))
	n := len(s.Records())
	ghost := "ghost"
	cases := []struct {
		name string
		e    events.Entry
		want error
	}{
		{"duplicate id", userMsg("a", "again"), session.ErrDuplicate},
		{"unknown label target", events.Entry{Type: events.EntryLabel, TargetID: &ghost, Label: "x"}, session.ErrUnknownEntry},
		{"unknown leaf target", events.Entry{Type: events.EntryLeaf, TargetID: &ghost}, session.ErrUnknownEntry},
		{"second header", events.Entry{Type: events.EntrySession, ID: "h"}, events.ErrInvalid},
		{"bad id", userMsg("a b", "x"), events.ErrInvalid},
	}
	for _, c := range cases {
		if _, err := s.Append(ctx, c.e); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	e := userMsg("z", "z")
	e.ParentID = &ghost
	if _, err := s.AppendExact(ctx, e); !errors.Is(err, session.ErrUnknownEntry) {
		t.Errorf("unknown parent: %v, want ErrUnknownEntry", err)
	}
	if got, _ := l.Read(ctx, events.DefaultRef("s4"), 0); len(got) != n {
		t.Fatalf("refused appends wrote: log has %d records, want %d", len(got), n)
	}
}

func TestSessionLosesRaceAndStops(t *testing.T) {
	ctx := context.Background()
	l := session.NewMemLog(0, nil)
	s := newSession(t, l, "s5")
	other, err := session.Load(ctx, l, events.DefaultRef("s5"))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, other, userMsg("mine", "first"))
	if _, err := s.Append(ctx, userMsg("late", "second")); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("stale writer = %v, want ErrConflict", err)
	}
	if !s.Lost() {
		t.Fatal("session not marked lost")
	}
	if _, err := s.Append(ctx, userMsg("later", "third")); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("lost writer = %v, want ErrConflict", err)
	}
	got, _ := l.Read(ctx, events.DefaultRef("s5"), 0)
	if len(got) != 2 || got[1].Entry.ID != "mine" {
		t.Fatalf("log = %d records, want header and mine", len(got))
	}
}

func TestSessionFork(t *testing.T) {
	ctx := context.Background()
	l := session.NewMemLog(0, nil)
	s := newSession(t, l, "s6")
	mustAppend(t, s, userMsg("a", "a"))
	mustAppend(t, s, userMsg("b", "b"))
	mustAppend(t, s, userMsg("c", "c"))
	b := "b"
	if _, err := s.MoveTo(ctx, &b); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, userMsg("d", "other branch"))
	if _, err := s.SetLabel(ctx, "c", "off the path"); err != nil { // on d's path, targets c
		t.Fatal(err)
	}
	mustAppend(t, s, userMsg("e", "after the label"))
	f, err := s.Fork(ctx, l, "s6-fork", "")
	if err != nil {
		t.Fatal(err)
	}
	if f.Header().ParentSession != "s6" || f.Header().Model != "scripted/test" {
		t.Fatalf("fork header = %+v", f.Header())
	}
	var got []string
	for _, e := range f.Entries()[1:] {
		got = append(got, e.ID)
	}
	if !slices.Equal(got, []string{"a", "b", "d", "e"}) {
		t.Fatalf("fork holds %v, want [a b d e]", got)
	}
	if p := f.Entries()[4].ParentID; p == nil || *p != "d" {
		t.Fatalf("e's parent in the fork = %v, want d (the skipped label's parent)", p)
	}
	re, err := session.Load(ctx, l, events.DefaultRef("s6-fork"))
	if err != nil || leafOf(re) != "e" {
		t.Fatalf("reloaded fork leaf %s, %v", leafOf(re), err)
	}
	if probs := session.VerifyChain(re.Records()); probs != nil {
		t.Fatalf("fork chain: %v", probs[0])
	}
}
