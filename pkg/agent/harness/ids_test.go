package harness_test

import (
	"context"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// idChecker is a session that fails the test when the harness gives an
// entry an id: ids are the session's (the orchestrator's store derives
// them), and an id the harness proposed would be a second owner.
type idChecker struct {
	*agenttest.Session
	t testing.TB
}

func (s idChecker) Append(ctx context.Context, e events.Entry) (events.Entry, error) {
	if e.ID != "" {
		s.t.Errorf("the harness appended a %s entry with id %q; ids are the session's", e.Type, e.ID)
	}
	return s.Session.Append(ctx, e)
}

// TestEntryIDsAreTheSessions: a prompt with a command id, its tool call's
// result and the reply all reach the session without an id.
func TestEntryIDsAreTheSessions(t *testing.T) {
	sess := idChecker{agenttest.NewSession(), t}
	ls := newTool("ls", func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("a.go"), nil })
	sc, err := scripted.Parse([]byte(`{"rules":[
		{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"id":"t1","name":"ls"}]}},
		{"reply":{"text":"done"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := scripted.New(sc)
	h, err := harness.New(context.Background(), harness.Config{SessionID: "s1", Session: sess,
		Providers: map[string]llm.Provider{scripted.Name: p}, Model: p.Model("one"), Tools: []tool.Tool{ls}})
	if err != nil {
		t.Fatal(err)
	}
	msg := user("list")
	msg.CommandID = "c1"
	if err := h.Prompt(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	roles := map[string]bool{}
	for _, e := range sess.Entries() {
		if e.Message != nil {
			roles[e.Message.Role] = true
		}
	}
	if !roles[events.RoleUser] || !roles[events.RoleToolResult] || !roles[events.RoleAssistant] {
		t.Fatalf("the run recorded the roles %v", roles)
	}
}
