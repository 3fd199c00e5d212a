package store

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

// Tree returns the tree of session sid.
func (d *DB) Tree(sid string) (Tree, error) {
	r := d.read()
	defer r.close()
	s, err := r.session(sid)
	if err != nil {
		return Tree{}, err
	}
	t := Tree{Session: sid, Leaf: s.Leaf, Nodes: []TreeNode{}}
	p := pNode + sid + "/"
	it, err := r.iter([]byte(p), prefixEnd(p))
	if err != nil {
		return Tree{}, err
	}
	defer it.Close()
	index := map[string]int{}
	for ok := it.First(); ok; ok = it.Next() {
		var n TreeNode
		if err := unmarshal(it.Key(), it.Value(), &n.Node); err != nil {
			return Tree{}, err
		}
		n.Children = []string{}
		index[n.ID] = len(t.Nodes)
		t.Nodes = append(t.Nodes, n)
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
