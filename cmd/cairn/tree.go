package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

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
			s, closeLog, err := lf.load(ctx, args[0])
			if err != nil {
				return err
			}
			defer closeLog()
			idx, err := s.Index()
			if err != nil {
				return err
			}
			w := bufio.NewWriter(e.stdout)
			writeTree(w, idx.Tree())
			return w.Flush()
		},
	}
	lf.add(c)
	return c
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
