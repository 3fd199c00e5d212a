package store

import (
	"fmt"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// TreeNode is a node of a session tree with its children, in log order.
type TreeNode struct {
	Node
	Children []string `json:"children"`
}

// Tree is a session's whole tree: every tree entry in log order, and the
// active leaf.
type Tree struct {
	Session string     `json:"session"`
	Leaf    *string    `json:"leaf"`
	Nodes   []TreeNode `json:"nodes"`
}

// Tree returns the tree of session sid. It reads the session's entries
// (e/<sid>/) and decodes each: the tree is not stored apart from them, so
// that applying an entry writes it once. Every entry but the session header
// is a node, with a preview of its text and tools (preview.go); a label entry sets the label of its target if the target came
// earlier (the latest entry with that id), a later label replacing it.
func (d *DB) Tree(sid events.SessionRef) (Tree, error) {
	r := d.read()
	defer r.close()
	s, err := r.session(sid)
	if err != nil {
		return Tree{}, err
	}
	t := Tree{Session: sid.ID, Leaf: s.Leaf, Nodes: []TreeNode{}}
	p := entryPrefix(sid)
	it, err := r.iter([]byte(p), prefixEnd(p))
	if err != nil {
		return Tree{}, err
	}
	defer it.Close()
	index := map[string]int{}
	for ok := it.First(); ok; ok = it.Next() {
		seq, ok := parseHex16(strings.TrimPrefix(string(it.Key()), p))
		if !ok {
			return Tree{}, fmt.Errorf("store: malformed entry key %q", it.Key())
		}
		e, err := events.DecodeEntry(it.Value())
		if err != nil {
			return Tree{}, fmt.Errorf("store: decode %q: %w", it.Key(), err)
		}
		if e.Type == events.EntrySession {
			continue
		}
		n := TreeNode{Node: Node{Seq: seq, ID: e.ID, ParentID: e.ParentID, Type: e.Type, Timestamp: e.Timestamp}, Children: []string{}}
		if e.Message != nil {
			n.Role = e.Message.Role
		}
		preview(&n.Node, &e)
		index[n.ID] = len(t.Nodes)
		t.Nodes = append(t.Nodes, n)
		if e.Type == events.EntryLabel && e.TargetID != nil {
			if i, ok := index[*e.TargetID]; ok {
				t.Nodes[i].Label = e.Label
			}
		}
	}
	if err := it.Error(); err != nil {
		return Tree{}, err
	}
	for _, n := range t.Nodes {
		if n.ParentID == nil {
			continue
		}
		if i, ok := index[*n.ParentID]; ok {
			t.Nodes[i].Children = append(t.Nodes[i].Children, n.ID)
		}
	}
	return t, nil
}
