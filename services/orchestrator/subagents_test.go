package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// subagentScript drives parents and children: a parent's prompt decides
// what its task calls ask, a child's prompt ("child says …", "child asks")
// what it answers.
func subagentScript() string {
	type call struct {
		ID        string         `json:"id"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	type rule struct {
		Match map[string]string `json:"match,omitempty"`
		Reply map[string]any    `json:"reply"`
	}
	task := func(id string, args map[string]any) call { return call{ID: id, Name: "task", Arguments: args} }
	var rules []rule
	for i := 1; i <= 20; i++ {
		rules = append(rules, rule{Match: map[string]string{"lastRole": "user", "contains": fmt.Sprintf("child says %02d", i)},
			Reply: map[string]any{"text": fmt.Sprintf("answer %02d", i)}})
	}
	var twenty []call
	for i := 1; i <= 20; i++ {
		twenty = append(twenty, task(fmt.Sprintf("k%02d", i), map[string]any{"prompt": fmt.Sprintf("child says %02d", i)}))
	}
	rules = append(rules,
		rule{Match: map[string]string{"lastRole": "user", "contains": "child asks"},
			Reply: map[string]any{"toolCalls": []call{{ID: "b1", Name: "bash", Arguments: map[string]any{"command": "echo hi"}}}}},
		rule{Match: map[string]string{"lastRole": "user", "contains": "one task"},
			Reply: map[string]any{"toolCalls": []call{task("k1", map[string]any{"prompt": "child says 07"})}}},
		rule{Match: map[string]string{"lastRole": "user", "contains": "bad model"},
			Reply: map[string]any{"toolCalls": []call{task("k1", map[string]any{"prompt": "child says 01", "model": "nope/x"})}}},
		rule{Match: map[string]string{"lastRole": "user", "contains": "nest"},
			Reply: map[string]any{"toolCalls": []call{task("k1", map[string]any{"prompt": "nest deeper"})}}},
		rule{Match: map[string]string{"lastRole": "user", "contains": "abortable"},
			Reply: map[string]any{"toolCalls": []call{task("k1", map[string]any{"prompt": "child asks"})}}},
		rule{Match: map[string]string{"lastRole": "user", "contains": "twenty"},
			Reply: map[string]any{"toolCalls": twenty}},
		rule{Match: map[string]string{"lastRole": "toolResult"}, Reply: map[string]any{"text": "finished"}},
		rule{Reply: map[string]any{"text": "ok"}},
	)
	b, err := json.Marshal(map[string]any{"rules": rules})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// settled reports whether the log's last message is an assistant reply
// that ends the run.
func settled(es []events.Entry) bool {
	for i := len(es) - 1; i >= 0; i-- {
		if m := es[i].Message; es[i].Type == events.EntryMessage && m != nil {
			return m.Role == events.RoleAssistant && m.StopReason != events.StopToolUse
		}
	}
	return false
}

func lastAssistant(es []events.Entry) *events.Message {
	for i := len(es) - 1; i >= 0; i-- {
		if m := es[i].Message; es[i].Type == events.EntryMessage && m != nil && m.Role == events.RoleAssistant {
			return m
		}
	}
	return nil
}

func resultOf(t *testing.T, es []events.Entry, callID string) *events.Message {
	t.Helper()
	var found *events.Message
	for _, m := range results(es) {
		if m.ToolCallID == callID {
			if found != nil {
				t.Fatalf("tool call %s has two results", callID)
			}
			found = m
		}
	}
	if found == nil {
		t.Fatalf("tool call %s has no result", callID)
	}
	return found
}

func TestTaskParentCompletesWithChildsAnswer(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", subagentScript())
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "p1", Tools: []string{"task", "ls"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "p1", Text: "one task"})
	es := p.waitLog("p1", "the parent settled", settled)
	if got := lastAssistant(es).Content.Text(); got != "finished" {
		t.Fatalf("parent's reply %q, want finished", got)
	}
	r := resultOf(t, es, "k1")
	child := events.ChildSessionID("p1", "k1")
	if r.IsError || r.Content.Text() != "answer 07" || !strings.Contains(string(r.Details), child) {
		t.Fatalf("task result %+v (details %s), want the child's answer naming %s", r.Content, r.Details, child)
	}
	if n := countType(es, events.EntryTaskStarted); n != 1 {
		t.Fatalf("%d task_started entries, want 1", n)
	}
	ces := p.waitLog(child, "the child settled", settled)
	h := ces[0]
	if h.ParentSession != "p1" || h.ParentToolCallID != "k1" || h.TaskDepth != 1 {
		t.Fatalf("child header parent %q call %q depth %d, want p1, k1, 1", h.ParentSession, h.ParentToolCallID, h.TaskDepth)
	}
	if strings.Join(h.Tools, ",") != "task,ls" {
		t.Fatalf("child tools %v, want the parent's", h.Tools)
	}
}

func TestTwentyParallelSubagents(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", subagentScript())
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "p20", Tools: []string{"task"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "p20", Text: "twenty"})
	es := p.waitLog("p20", "the parent settled", settled)
	var want, got []string
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("k%02d", i)
		want = append(want, id+"="+fmt.Sprintf("answer %02d", i))
		got = append(got, id+"="+resultOf(t, es, id).Content.Text())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("results in order\n got %v\nwant %v", got, want)
	}
	var order []string
	for i := 1; i <= 20; i++ {
		order = append(order, fmt.Sprintf("k%02d", i))
	}
	if ids := resultIDs(es); ids != strings.Join(order, ",") {
		t.Fatalf("results recorded in the order %s, want the model's", ids)
	}
	for i := 1; i <= 20; i++ {
		child := events.ChildSessionID("p20", fmt.Sprintf("k%02d", i))
		ces := p.waitLog(child, "child settled", settled)
		if n := countType(ces, events.EntrySession); n != 1 {
			t.Fatalf("child %s has %d headers", child, n)
		}
	}
}

func TestTaskDepthLimitIsAnErrorResult(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", subagentScript())
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "d0", Tools: []string{"task"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "d0", Text: "nest"})
	es := p.waitLog("d0", "the top session settled", settled)
	if r := resultOf(t, es, "k1"); r.IsError || r.Content.Text() != "finished" {
		t.Fatalf("top's task result %q (error %v), want the child's finished", r.Content.Text(), r.IsError)
	}
	sid := "d0"
	for depth := 1; depth <= 3; depth++ {
		sid = events.ChildSessionID(sid, "k1")
		ces := p.waitLog(sid, "nested child settled", settled)
		if ces[0].TaskDepth != depth {
			t.Fatalf("session %s at depth %d, want %d", sid, ces[0].TaskDepth, depth)
		}
		if depth == 3 {
			r := resultOf(t, ces, "k1")
			if !r.IsError || !strings.Contains(r.Content.Text(), "depth 4") {
				t.Fatalf("depth-3 task result %q, want an error naming depth 4", r.Content.Text())
			}
			if n := countType(ces, events.EntryTaskStarted); n != 0 {
				t.Fatalf("the refused task started %d children", n)
			}
		}
	}
}

func TestTaskMissingModelIsAnErrorResult(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", subagentScript())
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "m1", Tools: []string{"task"}})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "m1", Text: "bad model"})
	es := p.waitLog("m1", "the parent settled", settled)
	r := resultOf(t, es, "k1")
	if !r.IsError || !strings.Contains(r.Content.Text(), `model "nope/x" is not available`) {
		t.Fatalf("task result %q, want an error naming the missing model", r.Content.Text())
	}
	if n := countType(es, events.EntryTaskStarted); n != 0 {
		t.Fatalf("%d task_started entries for a refused task", n)
	}
}

func TestAbortOfParentAbortsChild(t *testing.T) {
	p := newPlatform(t)
	p.startApprovals("o1", subagentScript())
	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "a1", Tools: []string{"task", "bash"}, Approvals: askBash})
	p.send(events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "a1", Text: "abortable"})
	child := events.ChildSessionID("a1", "k1")
	p.waitRequests(child, 1) // the child inherited the policy and waits for an answer
	p.send(events.Command{ID: "c3", Type: events.CmdAbort, SessionID: "a1"})
	es := p.waitLog("a1", "the parent settled", settled)
	r := resultOf(t, es, "k1")
	if !r.IsError || !strings.Contains(r.Content.Text(), "aborted") {
		t.Fatalf("parent's task result %q, want an aborted error", r.Content.Text())
	}
	if m := lastAssistant(es); m.StopReason != events.StopAborted {
		t.Fatalf("parent's last reply stopped %s, want aborted", m.StopReason)
	}
	ces := p.waitLog(child, "the child aborted", settled)
	if m := lastAssistant(ces); m.StopReason != events.StopAborted {
		t.Fatalf("child's last reply stopped %s, want aborted", m.StopReason)
	}
	if !named(events.TaskCommandID("abort", child, "c3"))(ces) {
		t.Fatal("the child's log names no abort sent on the parent's abort")
	}
}
