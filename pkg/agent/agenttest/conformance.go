package agenttest

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
)

// TestSession checks that a harness.Session behaves as the harness needs:
// entries chain to the active leaf, retried appends are no-ops, leaf
// entries move the active leaf, and the header comes with the path, never
// in it. open returns a new session with no tree entry yet (with or without
// its `session` header).
func TestSession(t *testing.T, open func(t *testing.T) harness.Session) {
	ctx := context.Background()
	msg := func(text string) events.Entry {
		return events.Entry{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent(text)}}
	}
	texts := func(t *testing.T, s harness.Session) []string {
		t.Helper()
		_, path, err := s.Path(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range path {
			if e.Message != nil {
				out = append(out, e.Message.Content.Text())
			}
		}
		return out
	}
	same := func(a []string, b ...string) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}

	t.Run("chain", func(t *testing.T) {
		s := open(t)
		a, err := s.Append(ctx, msg("a"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Append(ctx, msg("b"))
		if err != nil {
			t.Fatal(err)
		}
		if a.ID == "" || a.Timestamp == "" || a.ParentID != nil {
			t.Fatalf("first entry = %+v", a)
		}
		if b.ParentID == nil || *b.ParentID != a.ID {
			t.Fatalf("second entry's parent = %v, want %s", b.ParentID, a.ID)
		}
		if got := texts(t, s); !same(got, "a", "b") {
			t.Fatalf("path = %v", got)
		}
	})
	t.Run("retried append is a no-op", func(t *testing.T) {
		s := open(t)
		e := msg("once")
		e.ID = events.DeriveID("tool", "call-1")
		for range 2 {
			got, err := s.Append(ctx, e)
			if err != nil || got.ID != e.ID {
				t.Fatalf("append: %+v, %v", got, err)
			}
		}
		if got := texts(t, s); !same(got, "once") {
			t.Fatalf("path = %v", got)
		}
	})
	t.Run("entries are found on any branch", func(t *testing.T) {
		s := open(t)
		a, _ := s.Append(ctx, msg("a"))
		b, _ := s.Append(ctx, msg("b"))
		if _, err := s.Append(ctx, events.Entry{Type: events.EntryLeaf, TargetID: &a.ID}); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Entry(ctx, b.ID)
		if err != nil || !ok || got.ID != b.ID || got.ParentID == nil || *got.ParentID != a.ID || got.Message.Content.Text() != "b" {
			t.Fatalf("Entry(%s) = %+v, %v, %v", b.ID, got, ok, err)
		}
		if _, ok, err := s.Entry(ctx, "no-such-entry"); ok || err != nil {
			t.Fatalf("Entry of an unknown id: ok %v, err %v", ok, err)
		}
	})
	t.Run("the header comes with the path, not in it", func(t *testing.T) {
		s := open(t)
		h0, path, err := s.Path(ctx)
		if err != nil || len(path) != 0 {
			t.Fatalf("a new session: path %v, err %v", path, err)
		}
		if _, err := s.Append(ctx, msg("a")); err != nil {
			t.Fatal(err)
		}
		h, path, err := s.Path(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if (h == nil) != (h0 == nil) || h != nil && (h.Type != events.EntrySession || h.ID != h0.ID) {
			t.Fatalf("header = %+v, before the first entry %+v", h, h0)
		}
		for _, e := range path {
			if e.Type == events.EntrySession {
				t.Fatalf("the header %q is in the path", e.ID)
			}
		}
		if len(path) != 1 || path[0].ParentID != nil {
			t.Fatalf("path = %+v, want one root entry", path)
		}
	})
	t.Run("leaf moves the active position", func(t *testing.T) {
		s := open(t)
		a, err := s.Append(ctx, msg("a"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, msg("b")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, events.Entry{Type: events.EntryLeaf, TargetID: &a.ID}); err != nil {
			t.Fatal(err)
		}
		c, _ := s.Append(ctx, msg("c"))
		if c.ParentID == nil || *c.ParentID != a.ID {
			t.Fatalf("entry after a leaf move has parent %v, want %s", c.ParentID, a.ID)
		}
		if got := texts(t, s); !same(got, "a", "c") {
			t.Fatalf("path = %v", got)
		}
		if _, err := s.Append(ctx, events.Entry{Type: events.EntryLeaf}); err != nil {
			t.Fatal(err)
		}
		if got := texts(t, s); len(got) != 0 {
			t.Fatalf("path before the first entry = %v", got)
		}
		d, _ := s.Append(ctx, msg("d"))
		if d.ParentID != nil {
			t.Fatalf("entry after moving before the first entry has parent %v", *d.ParentID)
		}
	})
}
