package harness

import (
	"encoding/json"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// A batch parked on a sub-agent waits until the task's result is held,
// and is over once its results are recorded.
func TestWaitOfTask(t *testing.T) {
	asst := events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse, Content: events.Content{Blocks: []events.Block{
		{Type: events.BlockToolCall, ID: "k1", Name: events.TaskTool, Arguments: json.RawMessage(`{"prompt":"p"}`)},
		{Type: events.BlockToolCall, ID: "b1", Name: "ls", Arguments: json.RawMessage(`{}`)}}}}
	held := func(id string) events.Entry {
		m := events.Message{Role: events.RoleToolResult, ToolCallID: id, Content: events.TextContent("r " + id)}
		return events.Entry{Type: events.EntryToolResultHeld, ToolCallID: id, Message: &m}
	}
	path := []events.Entry{
		{Type: events.EntryMessage, ID: "a1", Message: &asst},
		{Type: events.EntryTaskStarted, ToolCallID: "k1", ToolName: events.TaskTool, ChildSessionID: events.ChildSessionID("s", "k1")},
		held("b1"),
	}
	w := WaitOf(path)
	if w == nil || len(w.Tasks) != 1 || len(w.PendingTasks()) != 1 || w.Answered() || len(w.Pending()) != 0 {
		t.Fatalf("wait %+v: want one pending task and no approval request", w)
	}
	if _, ok := w.Request("k1"); ok {
		t.Fatal("a task call is not an approval request (approve must not answer it)")
	}
	if tk, ok := w.Task("k1"); !ok || tk.ChildSessionID != events.ChildSessionID("s", "k1") {
		t.Fatalf("Task(k1) = %+v, %v", tk, ok)
	}
	path = append(path, held("k1"))
	if w := WaitOf(path); w == nil || !w.Answered() {
		t.Fatalf("wait %+v: want answered once the task's result is held", w)
	}
	r := events.Message{Role: events.RoleToolResult, ToolCallID: "k1"}
	if w := WaitOf(append(path, events.Entry{Type: events.EntryMessage, Message: &r})); w != nil {
		t.Fatal("a batch whose results are recorded still waits")
	}
}
