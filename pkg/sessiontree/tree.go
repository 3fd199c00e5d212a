package sessiontree

import (
	"errors"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
)

// ErrMalformedTree is matched (errors.Is) by every [*TreeError] that reports
// a log whose entries do not form a valid tree.
var ErrMalformedTree = errors.New("session: malformed tree")

// ErrUnknownEntry is matched (errors.Is) when an id names no tree entry of
// the session.
var ErrUnknownEntry = errors.New("session: unknown entry")

// TreeError names the entry that makes a log or a query invalid.
type TreeError struct {
	Index   int    // position of the entry in the log; -1 when the id is not in it
	EntryID string // the offending entry (or the id that was looked up)
	Problem string // what is wrong, e.g. "parentId \"x\" is not an earlier entry"
	err     error  // ErrMalformedTree or ErrUnknownEntry
}

func (e *TreeError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("entry %q: %s", e.EntryID, e.Problem)
	}
	return fmt.Sprintf("entry %q (log position %d): %s", e.EntryID, e.Index, e.Problem)
}

// Unwrap returns ErrMalformedTree or ErrUnknownEntry.
func (e *TreeError) Unwrap() error { return e.err }

func malformed(i int, id, format string, args ...any) error {
	return &TreeError{Index: i, EntryID: id, Problem: fmt.Sprintf(format, args...), err: ErrMalformedTree}
}

func unknown(id string) error {
	return &TreeError{Index: -1, EntryID: id, Problem: "no such entry in this session", err: ErrUnknownEntry}
}

// Index is a validated view of one session's entries in log order: it finds
// entries by id, walks paths, lists children and knows the active leaf and
// the labels. It keeps the slice it was built from and never changes it; the
// caller must not change it either while the Index is in use.
//
// An Index is immutable and safe for concurrent use.
type Index struct {
	entries []events.Entry
	pos     map[string]int // tree entry id → position in entries
	header  int            // position of the session header, -1 when absent
	leaf    int            // position of the active leaf, -1 = before the first entry
	labels  map[string]string
}

// NewIndex validates entries (one session's log, in log order) and indexes
// them. The `session` header, when present, must come first; it is not a
// tree node. Every other entry is a node and must have an id not used by an
// earlier node, and a parentId that is nil or names an earlier node. The
// targetId of a `label` must name an earlier node, and that of a `leaf` must
// be nil or name an earlier node that is not itself a `leaf`. Because parents
// always come first, the tree has no cycles and every path ends at a root.
//
// Errors are [*TreeError]s matching [ErrMalformedTree] and name the first
// offending entry.
func NewIndex(entries []events.Entry) (*Index, error) {
	x := &Index{entries: entries, pos: make(map[string]int, len(entries)), header: -1, leaf: -1}
	for i := range entries {
		e := &entries[i]
		if e.Type == events.EntrySession {
			if i != 0 {
				return nil, malformed(i, e.ID, "the session header must be the first entry of the log")
			}
			x.header = 0
			continue
		}
		if e.ID == "" {
			return nil, malformed(i, e.ID, "id is empty")
		}
		if j, dup := x.pos[e.ID]; dup {
			return nil, malformed(i, e.ID, "duplicate id: log position %d has it already", j)
		}
		if e.ParentID != nil {
			if _, ok := x.pos[*e.ParentID]; !ok {
				return nil, malformed(i, e.ID, "parentId %q is not an earlier entry of the session", *e.ParentID)
			}
		}
		switch e.Type {
		case events.EntryLeaf:
			if e.TargetID != nil {
				j, ok := x.pos[*e.TargetID]
				if !ok {
					return nil, malformed(i, e.ID, "leaf targetId %q is not an earlier entry of the session", *e.TargetID)
				}
				if entries[j].Type == events.EntryLeaf {
					return nil, malformed(i, e.ID, "leaf targetId %q is itself a leaf entry", *e.TargetID)
				}
				x.leaf = j
			} else {
				x.leaf = -1
			}
		case events.EntryLabel:
			if e.TargetID == nil {
				return nil, malformed(i, e.ID, "label has no targetId")
			}
			if _, ok := x.pos[*e.TargetID]; !ok {
				return nil, malformed(i, e.ID, "label targetId %q is not an earlier entry of the session", *e.TargetID)
			}
			if x.labels == nil {
				x.labels = make(map[string]string)
			}
			if e.Label == "" {
				delete(x.labels, *e.TargetID)
			} else {
				x.labels[*e.TargetID] = e.Label
			}
			x.leaf = i
		default:
			x.leaf = i
		}
		x.pos[e.ID] = i
	}
	return x, nil
}

// Len returns the number of tree entries (the header is not counted).
func (x *Index) Len() int { return len(x.pos) }

// Header returns the session header, or nil when the log has none.
func (x *Index) Header() *events.Entry {
	if x.header < 0 {
		return nil
	}
	return &x.entries[x.header]
}

// Entry returns the tree entry with the given id. The pointer aliases the
// indexed slice: read, never write.
func (x *Index) Entry(id string) (*events.Entry, bool) {
	i, ok := x.pos[id]
	if !ok {
		return nil, false
	}
	return &x.entries[i], true
}

// Leaf returns the id of the active leaf, the position the next entry is
// appended under, or nil when the position is before the first entry (the
// next entry is a new root).
//
// The active leaf is what replaying the log gives: every tree entry moves
// the position to itself, except a `leaf` entry, which moves it to its
// targetId (nil = before the first entry). So it is the last `leaf` entry's
// target unless other tree entries were appended after that `leaf`, in which
// case it is the last of those; with no `leaf` entry at all, it is the last
// tree entry appended, as in pi. A log with no tree entry has a nil leaf.
func (x *Index) Leaf() *string {
	if x.leaf < 0 {
		return nil
	}
	return &x.entries[x.leaf].ID
}

// Path returns the entries from a root down to the entry id, inclusive, in
// that order: the branch of the conversation that id ends. The entries are
// shallow copies sharing their messages with the index. An unknown id is a
// [*TreeError] matching [ErrUnknownEntry].
func (x *Index) Path(id string) ([]events.Entry, error) {
	i, ok := x.pos[id]
	if !ok {
		return nil, unknown(id)
	}
	n := 0
	for j := i; ; {
		n++
		p := x.entries[j].ParentID
		if p == nil {
			break
		}
		j = x.pos[*p]
	}
	path := make([]events.Entry, n)
	for j := i; ; {
		n--
		path[n] = x.entries[j]
		p := x.entries[j].ParentID
		if p == nil {
			break
		}
		j = x.pos[*p]
	}
	return path, nil
}

// ActivePath returns the path from a root to the active leaf ([Index.Leaf]),
// or an empty path when the leaf is before the first entry.
func (x *Index) ActivePath() []events.Entry {
	leaf := x.Leaf()
	if leaf == nil {
		return nil
	}
	path, _ := x.Path(*leaf) // the leaf is always a known entry
	return path
}

// Children returns the ids of the entries whose parent is id, in log order;
// an empty id asks for the roots. An unknown id is a [*TreeError] matching
// [ErrUnknownEntry].
func (x *Index) Children(id string) ([]string, error) {
	start := 0
	if id != "" {
		i, ok := x.pos[id]
		if !ok {
			return nil, unknown(id)
		}
		start = i + 1 // children always come after their parent
	}
	var ids []string
	for i := start; i < len(x.entries); i++ {
		e := &x.entries[i]
		if e.Type == events.EntrySession {
			continue
		}
		if id == "" && e.ParentID == nil || e.ParentID != nil && *e.ParentID == id {
			ids = append(ids, e.ID)
		}
	}
	return ids, nil
}

// Label returns the label of entry id, or "" when it has none.
func (x *Index) Label(id string) string { return x.labels[id] }

// Labels returns a fresh map of entry id → label. For each target the last
// `label` entry wins; an empty label clears it.
func (x *Index) Labels() map[string]string {
	m := make(map[string]string, len(x.labels))
	for k, v := range x.labels {
		m[k] = v
	}
	return m
}
