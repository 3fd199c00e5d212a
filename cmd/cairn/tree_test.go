package main

import (
	"bufio"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
)

// A tree from one gateway answer prints with its previews, tool names and
// labels, the active path marked.
func TestWriteGatewayTree(t *testing.T) {
	p := func(s string) *string { return &s }
	node := func(id string, parent *string, typ, role, preview string, tools []string, label string, children ...string) client.TreeNode {
		return client.TreeNode{ID: id, ParentID: parent, Type: typ, Role: role, Preview: preview, Tools: tools, Label: label,
			Children: append([]string{}, children...)}
	}
	tree := client.Tree{Session: "t1", Leaf: p("e6"), Nodes: []client.TreeNode{
		node("e1", nil, "message", "user", "please list files…", nil, "the ask", "e2", "e5"),
		node("e2", p("e1"), "message", "assistant", "", []string{"ls", "read"}, "", "e3"),
		node("e3", p("e2"), "message", "toolResult", "a.txt…", []string{"ls"}, "", "e4"),
		node("e4", p("e3"), "message", "assistant", "I see the files.", nil, ""),
		node("e5", p("e1"), "model_change", "", "openai/gpt-x", nil, "", "e6"),
		node("e6", p("e5"), "label", "", "the ask", nil, ""),
	}}
	var b strings.Builder
	w := bufio.NewWriter(&b)
	writeGatewayTree(w, tree)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `session t1  leaf e6
* e1 user "please list files…" [the ask]
    e2 assistant call:ls call:read
      e3 toolResult ls "a.txt…"
        e4 assistant "I see the files."
*   e5 model_change "openai/gpt-x"
*     e6 label "the ask"
`
	if b.String() != want {
		t.Fatalf("printed\n%s\nwant\n%s", b.String(), want)
	}
}
