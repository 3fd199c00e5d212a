package sessiontree

import "github.com/cairn-agents/cairn/pkg/events"

// Tree is the shape of a session for printing or JSON: every tree entry as a
// [Node] in log order, with its children, its label and whether it lies on the
// active path. The list is flat (parents before children) so that a deep
// conversation never needs deep recursion to print or encode.
type Tree struct {
	Session string   `json:"session,omitempty"` // the header's id ("" without a header)
	Roots   []string `json:"roots"`             // ids of the entries with no parent, in log order
	Leaf    *string  `json:"leaf"`              // the active leaf; null = before the first entry
	Nodes   []Node   `json:"nodes"`             // every tree entry, in log order
}

// Node is one entry of a [Tree].
type Node struct {
	ID       string   `json:"id"`
	ParentID *string  `json:"parentId"`
	Type     string   `json:"type"`
	Role     string   `json:"role,omitempty"` // message entries: the message's role
	Label    string   `json:"label,omitempty"`
	Active   bool     `json:"active,omitempty"` // on the path from a root to the active leaf
	Children []string `json:"children,omitempty"`

	// Entry is the entry itself, shared with the index: read, never write.
	Entry *events.Entry `json:"-"`
}

// Tree builds the [Tree] of the session in one pass over the log.
func (x *Index) Tree() Tree {
	t := Tree{Leaf: x.Leaf(), Nodes: make([]Node, 0, len(x.pos)), Roots: []string{}}
	if h := x.Header(); h != nil {
		t.Session = h.ID
	}
	node := make(map[string]int, len(x.pos)) // id → position in t.Nodes
	for i := range x.entries {
		e := &x.entries[i]
		if e.Type == events.EntrySession {
			continue
		}
		n := Node{ID: e.ID, ParentID: e.ParentID, Type: e.Type, Label: x.labels[e.ID], Entry: e}
		if e.Type == events.EntryMessage && e.Message != nil {
			n.Role = e.Message.Role
		}
		node[e.ID] = len(t.Nodes)
		t.Nodes = append(t.Nodes, n)
		if e.ParentID == nil {
			t.Roots = append(t.Roots, e.ID)
		} else {
			p := &t.Nodes[node[*e.ParentID]]
			p.Children = append(p.Children, e.ID)
		}
	}
	for j := x.leaf; j >= 0; {
		e := &x.entries[j]
		t.Nodes[node[e.ID]].Active = true
		if e.ParentID == nil {
			break
		}
		j = x.pos[*e.ParentID]
	}
	return t
}
