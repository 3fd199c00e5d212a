package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
)

func newTreeCmd(e *env) *cobra.Command {
	var lf logFlags
	c := &cobra.Command{
		Use:   "tree ID",
		Short: "print a session's tree; * marks the active path",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := sessionArg(args[0]); err != nil {
				return err
			}
			direct, err := lf.direct(cmd)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(e.stdout)
			if !direct {
				cl, err := clientFrom(cmd)
				if err != nil {
					return err
				}
				t, err := cl.Tree(ctx, args[0])
				if err != nil {
					return err
				}
				writeGatewayTree(w, t)
				return w.Flush()
			}
			s, closeLog, err := lf.load(ctx, args[0])
			if err != nil {
				return err
			}
			defer closeLog()
			idx, err := s.Index()
			if err != nil {
				return err
			}
			writeTree(w, idx.Tree())
			return w.Flush()
		},
	}
	lf.add(c)
	return c
}

// writeGatewayTree prints the read model's tree as writeTree prints the
// log's, from that one answer: each node's preview and tools stand for its
// description.
func writeGatewayTree(w *bufio.Writer, t client.Tree) {
	byID := make(map[string]*client.TreeNode, len(t.Nodes))
	known := func(id *string) bool { _, ok := byID[deref(id)]; return id != nil && ok }
	for i := range t.Nodes {
		byID[t.Nodes[i].ID] = &t.Nodes[i]
	}
	active := map[string]bool{}
	for _, id := range t.ActivePath() {
		active[id] = true
	}
	fmt.Fprintf(w, "session %s  leaf %s\n", t.Session, deref(t.Leaf))
	type item struct {
		id    string
		depth int
	}
	var stack []item
	for i := len(t.Nodes) - 1; i >= 0; i-- {
		if !known(t.Nodes[i].ParentID) {
			stack = append(stack, item{t.Nodes[i].ID, 0}) // a root, or its parent is not in the tree
		}
	}
	shown := map[string]bool{} // an id listed twice is shown once
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n, ok := byID[it.id]
		if !ok || shown[it.id] {
			continue
		}
		shown[it.id] = true
		mark := " "
		if active[n.ID] {
			mark = "*"
		}
		desc := nodeLine(n)
		label := ""
		if n.Label != "" {
			label = fmt.Sprintf(" [%s]", n.Label)
		}
		fmt.Fprintf(w, "%s %s%s %s%s\n", mark, strings.Repeat("  ", it.depth), n.ID, desc, label)
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{n.Children[i], it.depth + 1})
		}
	}
}

// writeTree prints t depth first, children indented under their parent,
// with an explicit stack so a deep conversation needs no deep recursion.
func writeTree(w *bufio.Writer, t sessiontree.Tree) {
	byID := make(map[string]*sessiontree.Node, len(t.Nodes))
	for i := range t.Nodes {
		byID[t.Nodes[i].ID] = &t.Nodes[i]
	}
	fmt.Fprintf(w, "session %s  leaf %s\n", t.Session, deref(t.Leaf))
	type item struct {
		id    string
		depth int
	}
	var stack []item
	for i := len(t.Roots) - 1; i >= 0; i-- {
		stack = append(stack, item{t.Roots[i], 0})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := byID[it.id]
		mark := " "
		if n.Active {
			mark = "*"
		}
		label := ""
		if n.Label != "" {
			label = fmt.Sprintf(" [%s]", n.Label)
		}
		fmt.Fprintf(w, "%s %s%s %s%s\n", mark, strings.Repeat("  ", it.depth), n.ID, describe(n.Entry), label)
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{n.Children[i], it.depth + 1})
		}
	}
}

// nodeLine says what a node of the read model's tree holds, as describe
// says it of an entry: its role (or type), the tools it calls or answers
// for, and its preview.
func nodeLine(n *client.TreeNode) string {
	s := n.Type
	if n.Role != "" {
		s = n.Role
	}
	for _, tool := range n.Tools {
		if n.Role == events.RoleAssistant {
			s += " call:" + tool
		} else {
			s += " " + tool
		}
	}
	if n.Preview != "" {
		s += fmt.Sprintf(" %q", n.Preview)
	}
	return s
}
