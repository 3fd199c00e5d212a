package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/sessiontree/sessiontreetest"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// GoldenRun is what prompting a harness over a golden context case gave.
type GoldenRun struct {
	Request llm.Request    // what the provider was sent
	Entries []events.Entry // the session afterwards, header first
	Prompt  string         // the id of the prompt's entry
}

// RunGolden appends the log of golden case c to a new [Session], moves to
// at (a want's position: "" = the active leaf, "null" = before the first
// entry), starts a harness on it and prompts it with text. Every model the
// case names is answered "ok" through a [Recorder]; every tool it names is
// offered. What the provider was sent is the context of the prompt's entry
// (package sessiontree) through agent.ToLLM — the test compares.
//
// A case whose log the session cannot hold as written (an entry whose
// parent is not the active leaf, a move to an entry it lacks) is an error:
// the harness never sees it. A harness that fails fails t.
func RunGolden(t testing.TB, c sessiontreetest.Case, at, text string) (GoldenRun, error) {
	t.Helper()
	ctx := context.Background()
	s := NewSession()
	for _, e := range c.Entries {
		got, err := s.Append(ctx, e)
		if err != nil {
			return GoldenRun{}, err
		}
		if e.Type != events.EntrySession && !sameID(got.ParentID, e.ParentID) {
			return GoldenRun{}, fmt.Errorf("entry %s has parentId %s in the case and %s once appended: the log does not follow the append rule",
				e.ID, show(e.ParentID), show(got.ParentID))
		}
	}
	switch at {
	case "":
	case "null":
		if _, err := s.Append(ctx, events.Entry{Type: events.EntryLeaf}); err != nil {
			return GoldenRun{}, err
		}
	default:
		if _, err := s.Append(ctx, events.Entry{Type: events.EntryLeaf, TargetID: &at}); err != nil {
			return GoldenRun{}, err
		}
	}

	sc, err := scripted.Parse([]byte(`{"rules":[{"reply":{"text":"ok"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{Next: scripted.New(sc)}
	providers := map[string]llm.Provider{scripted.Name: rec}
	var tools []tool.Tool
	offered := map[string]bool{}
	addTools := func(names []string) {
		for _, n := range names {
			if !offered[n] {
				offered[n] = true
				tools = append(tools, noopTool(n))
			}
		}
	}
	for _, e := range c.Entries {
		named := []string{e.Provider} // a model_change's
		if p, _, ok := strings.Cut(e.Model, "/"); ok {
			named = append(named, p) // the header's
		}
		if e.Message != nil {
			named = append(named, e.Message.Provider) // an assistant message's
		}
		for _, p := range named {
			if p != "" {
				providers[p] = rec
			}
		}
		addTools(e.Tools)
		addTools(e.ActiveToolNames)
	}
	h, err := harness.New(ctx, harness.Config{
		SessionID: "golden", Session: s, Providers: providers, Tools: tools,
		Model: llm.Model{Provider: scripted.Name, ID: "default", ContextWindow: scripted.DefaultContextWindow},
		Models: func(ref string) (llm.Model, bool) {
			p, id, ok := strings.Cut(ref, "/")
			return llm.Model{Provider: p, ID: id, ContextWindow: scripted.DefaultContextWindow}, ok
		},
	})
	if err != nil {
		t.Fatalf("%s: harness.New: %v", c.Name, err)
	}
	prompt := events.Message{Role: events.RoleUser, Content: events.TextContent(text)}
	if err := h.Prompt(ctx, prompt); err != nil {
		t.Fatalf("%s: Prompt: %v", c.Name, err)
	}
	run := GoldenRun{Entries: s.Entries()}
	run.Request, _ = rec.Last()
	for i := len(run.Entries) - 1; i >= 0; i-- {
		if m := run.Entries[i].Message; m != nil && m.Role == events.RoleUser && m.Content.Text() == text {
			run.Prompt = run.Entries[i].ID
			break
		}
	}
	return run, nil
}

func sameID(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(p *string) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *p)
}

type noopTool string

func (n noopTool) Spec() events.ToolSpec {
	return events.ToolSpec{Name: string(n), Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (n noopTool) Execute(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
	return tool.Text(string(n) + " ran"), nil
}
