package sessiontree

import (
	"fmt"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// FuzzTreeAndContext builds a session the way the session operations do
// (each entry under the current position, leaf entries moving it) from
// arbitrary bytes, and checks that the index agrees with the simulated
// position, that paths are chains, that the reducer accepts every path and
// that its parts are its context.
func FuzzTreeAndContext(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 4, 0, 3, 1, 0, 6, 7, 5})
	f.Add([]byte{0, 0, 3, 0, 0, 4, 9, 0, 4, 2, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		log := []events.Entry{{Type: events.EntrySession, ID: "s", Timestamp: "2026-03-01T10:00:00.000Z"}}
		var pos *string // simulated position
		var nodes []string
		pick := func(b byte) string { return nodes[int(b)%len(nodes)] }
		for i := 0; i+1 < len(data); i += 2 {
			op, arg := data[i]%8, data[i+1]
			e := events.Entry{ID: fmt.Sprintf("e%d", i), ParentID: pos, Timestamp: "2026-03-01T10:00:00.000Z"}
			switch op {
			case 0:
				e.Type, e.Message = events.EntryMessage, &events.Message{Role: events.RoleUser, Content: events.TextContent("u")}
			case 1:
				e.Type, e.Message = events.EntryMessage, &events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse,
					Content: events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: fmt.Sprintf("t%d", arg%4), Name: "bash"}}}}
			case 2:
				e.Type, e.Message = events.EntryMessage, &events.Message{Role: events.RoleToolResult, ToolCallID: fmt.Sprintf("t%d", arg%4), ToolName: "bash"}
			case 3:
				e.Type = events.EntryLeaf
				if len(nodes) > 0 && arg%5 != 0 {
					e.TargetID = ptr(pick(arg))
				}
			case 4:
				if len(nodes) == 0 {
					continue
				}
				e.Type, e.Summary, e.FirstKeptEntryID = events.EntryCompaction, "s", pick(arg)
			case 5:
				e.Type, e.Provider, e.ModelID = events.EntryModelChange, "p", fmt.Sprintf("m%d", arg)
			case 6:
				e.Type, e.Summary, e.FromID = events.EntryBranchSummary, "b", "x"
			case 7:
				e.Type, e.Reason = events.EntryTurnInterrupted, "crash"
			}
			log = append(log, e)
			if e.Type == events.EntryLeaf {
				pos = e.TargetID
			} else {
				pos = &log[len(log)-1].ID
				nodes = append(nodes, e.ID)
			}
		}
		x, err := NewIndex(log)
		if err != nil {
			t.Fatalf("NewIndex refused a log built by the rules: %v", err)
		}
		if got := x.Leaf(); (got == nil) != (pos == nil) || got != nil && *got != *pos {
			t.Fatalf("Leaf = %v, simulated position %v", deref(got), deref(pos))
		}
		path := x.ActivePath()
		if pos != nil && path[len(path)-1].ID != *pos {
			t.Fatalf("ActivePath ends at %q, want %q", path[len(path)-1].ID, *pos)
		}
		ctx, err := BuildContext(x.Header(), path)
		if err != nil {
			t.Fatalf("BuildContext refused an active path: %v", err)
		}
		if ctx.CompactionID != "" && ctx.Messages[0].Role != events.RoleCompactionSummary {
			t.Fatalf("with compaction %s the first message is %q", ctx.CompactionID, ctx.Messages[0].Role)
		}
		if err := partsAgree(x.Header(), path, ctx); err != nil {
			t.Fatal(err)
		}
		tr := x.Tree()
		active := 0
		for _, n := range tr.Nodes {
			if n.Active {
				active++
			}
		}
		if len(tr.Nodes) != x.Len() || active != len(path) {
			t.Fatalf("Tree has %d nodes (%d active), index %d nodes, path %d", len(tr.Nodes), active, x.Len(), len(path))
		}
	})
}
