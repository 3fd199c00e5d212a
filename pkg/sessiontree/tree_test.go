package sessiontree

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

func ptr(s string) *string { return &s }

// node returns a tree entry; parent "" means a root.
func node(typ, id, parent string) events.Entry {
	e := events.Entry{Type: typ, ID: id, Timestamp: "2026-01-01T00:00:00.000Z"}
	if parent != "" {
		e.ParentID = ptr(parent)
	}
	if typ == events.EntryMessage {
		e.Message = &events.Message{Role: events.RoleUser, Content: events.TextContent(id)}
	}
	return e
}

func leafTo(id, parent string, target *string) events.Entry {
	e := node(events.EntryLeaf, id, parent)
	e.TargetID = target
	return e
}

func labelOf(id, parent, target, label string) events.Entry {
	e := node(events.EntryLabel, id, parent)
	e.TargetID = ptr(target)
	e.Label = label
	return e
}

// branchy is:   a ─ b ─ c          (first branch)
//
//	└─ d ─ e      (second branch, after moving to a)
func branchy() []events.Entry {
	return []events.Entry{
		{Type: events.EntrySession, ID: "s1", Timestamp: "2026-01-01T00:00:00.000Z"},
		node(events.EntryMessage, "a", ""),
		node(events.EntryMessage, "b", "a"),
		node(events.EntryMessage, "c", "b"),
		leafTo("l1", "c", ptr("a")),
		node(events.EntryMessage, "d", "a"),
		labelOf("lb1", "d", "b", "first try"),
		node(events.EntryMessage, "e", "lb1"),
	}
}

func mustIndex(t *testing.T, entries []events.Entry) *Index {
	t.Helper()
	x, err := NewIndex(entries)
	if err != nil {
		t.Fatalf("NewIndex: %v", err)
	}
	return x
}

func ids(path []events.Entry) []string {
	out := make([]string, len(path))
	for i := range path {
		out[i] = path[i].ID
	}
	return out
}

func TestIndexPathChildrenLabels(t *testing.T) {
	x := mustIndex(t, branchy())
	if got := x.Len(); got != 7 {
		t.Errorf("Len = %d, want 7 (the header is not a node)", got)
	}
	if h := x.Header(); h == nil || h.ID != "s1" {
		t.Errorf("Header = %v, want s1", h)
	}
	path, err := x.Path("c")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(path); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Path(c) = %v", got)
	}
	if got := ids(x.ActivePath()); !slices.Equal(got, []string{"a", "d", "lb1", "e"}) {
		t.Errorf("ActivePath = %v", got)
	}
	kids, err := x.Children("a")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kids, []string{"b", "d"}) {
		t.Errorf("Children(a) = %v, want [b d] in log order", kids)
	}
	roots, _ := x.Children("")
	if !slices.Equal(roots, []string{"a"}) {
		t.Errorf("Children(\"\") = %v, want the roots [a]", roots)
	}
	if got := x.Label("b"); got != "first try" {
		t.Errorf("Label(b) = %q", got)
	}
	if e, ok := x.Entry("d"); !ok || e.ID != "d" {
		t.Errorf("Entry(d) = %v, %v", e, ok)
	}
	if _, ok := x.Entry("s1"); ok {
		t.Error("Entry(s1) found the header; it is not a tree node")
	}
	for _, q := range []func() error{
		func() error { _, err := x.Path("zz"); return err },
		func() error { _, err := x.Children("zz"); return err },
	} {
		err := q()
		if !errors.Is(err, ErrUnknownEntry) || !strings.Contains(err.Error(), `"zz"`) {
			t.Errorf("query of an unknown id: err = %v, want ErrUnknownEntry naming zz", err)
		}
	}
}

func TestLeaf(t *testing.T) {
	base := branchy()[:4] // header, a, b, c
	cases := []struct {
		name string
		more []events.Entry
		want *string
	}{
		{"no leaf entry: the last entry appended", nil, ptr("c")},
		{"a leaf entry: its target", []events.Entry{leafTo("l1", "c", ptr("a"))}, ptr("a")},
		{"entries after a leaf entry move on", []events.Entry{leafTo("l1", "c", ptr("a")), node(events.EntryMessage, "d", "a")}, ptr("d")},
		{"a label moves the position like any entry (pi)", []events.Entry{labelOf("lb", "c", "a", "x")}, ptr("lb")},
		{"a null target: before the first entry", []events.Entry{leafTo("l1", "c", nil)}, nil},
		{"a new root after a null target", []events.Entry{leafTo("l1", "c", nil), node(events.EntryMessage, "r2", "")}, ptr("r2")},
		{"the last leaf entry wins", []events.Entry{leafTo("l1", "c", nil), leafTo("l2", "c", ptr("b"))}, ptr("b")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := mustIndex(t, append(slices.Clone(base), c.more...))
			got := x.Leaf()
			if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Errorf("Leaf = %v, want %v", deref(got), deref(c.want))
			}
			if c.want == nil && x.ActivePath() != nil {
				t.Errorf("ActivePath = %v, want empty before the first entry", ids(x.ActivePath()))
			}
		})
	}
	if got := mustIndex(t, base[:1]).Leaf(); got != nil {
		t.Errorf("a log with only a header: Leaf = %q, want nil", *got)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestLabels(t *testing.T) {
	entries := append(branchy()[:4],
		labelOf("l1", "c", "a", "one"),
		labelOf("l2", "l1", "a", "two"),
		labelOf("l3", "l2", "b", "bee"),
		labelOf("l4", "l3", "b", ""),
	)
	got := mustIndex(t, entries).Labels()
	if len(got) != 1 || got["a"] != "two" {
		t.Errorf("Labels = %v, want map[a:two] (last wins, empty clears)", got)
	}
}

func TestIndexRejectsMalformedLogs(t *testing.T) {
	h := events.Entry{Type: events.EntrySession, ID: "s1"}
	cases := []struct {
		name    string
		entries []events.Entry
		want    string // in the error message
	}{
		{"duplicate id", []events.Entry{h, node(events.EntryMessage, "a", ""), node(events.EntryMessage, "a", "a")},
			`entry "a" (log position 2): duplicate id: log position 1 has it already`},
		{"parent not in the log", []events.Entry{h, node(events.EntryMessage, "a", "x")},
			`entry "a" (log position 1): parentId "x" is not an earlier entry`},
		{"parent later in the log", []events.Entry{h, node(events.EntryMessage, "a", "b"), node(events.EntryMessage, "b", "")},
			`entry "a" (log position 1): parentId "b" is not an earlier entry`},
		{"own parent", []events.Entry{node(events.EntryMessage, "a", "a")},
			`entry "a" (log position 0): parentId "a" is not an earlier entry`},
		{"header not first", []events.Entry{node(events.EntryMessage, "a", ""), h},
			`entry "s1" (log position 1): the session header must be the first entry`},
		{"empty id", []events.Entry{h, node(events.EntryMessage, "", "")},
			`entry "" (log position 1): id is empty`},
		{"leaf to unknown", []events.Entry{node(events.EntryMessage, "a", ""), leafTo("l", "a", ptr("q"))},
			`entry "l" (log position 1): leaf targetId "q" is not an earlier entry`},
		{"leaf to leaf", []events.Entry{node(events.EntryMessage, "a", ""), leafTo("l", "a", nil), leafTo("m", "a", ptr("l"))},
			`entry "m" (log position 2): leaf targetId "l" is itself a leaf entry`},
		{"label to unknown", []events.Entry{node(events.EntryMessage, "a", ""), labelOf("l", "a", "q", "x")},
			`entry "l" (log position 1): label targetId "q" is not an earlier entry`},
		{"label without target", []events.Entry{node(events.EntryMessage, "a", ""), {Type: events.EntryLabel, ID: "l"}},
			`entry "l" (log position 1): label has no targetId`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewIndex(c.entries)
			if !errors.Is(err, ErrMalformedTree) {
				t.Fatalf("err = %v, want ErrMalformedTree", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %q, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestTreeValue(t *testing.T) {
	tr := mustIndex(t, branchy()).Tree()
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"session":"s1","roots":["a"],"leaf":"e","nodes":[` +
		`{"id":"a","parentId":null,"type":"message","role":"user","active":true,"children":["b","d"]},` +
		`{"id":"b","parentId":"a","type":"message","role":"user","label":"first try","children":["c"]},` +
		`{"id":"c","parentId":"b","type":"message","role":"user","children":["l1"]},` +
		`{"id":"l1","parentId":"c","type":"leaf"},` +
		`{"id":"d","parentId":"a","type":"message","role":"user","active":true,"children":["lb1"]},` +
		`{"id":"lb1","parentId":"d","type":"label","active":true,"children":["e"]},` +
		`{"id":"e","parentId":"lb1","type":"message","role":"user","active":true}]}`
	if string(b) != want {
		t.Errorf("Tree JSON:\n got %s\nwant %s", b, want)
	}
	if tr.Nodes[2].Entry == nil || tr.Nodes[2].Entry.ID != "c" {
		t.Error("Node.Entry does not point at the entry")
	}
}
