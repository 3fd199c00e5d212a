package telemetrytest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/telemetry"
)

// TestTraceFollowsPromptAcrossProcesses runs a prompt with one tool call
// through an orchestrator (this process) and a toolrunner (a child process)
// and checks the one trace they export together: prompt → turn → llm
// request and tool call, the toolrunner's execution under the tool call
// across the NATS hop, and the session appends under the prompt.
func TestTraceFollowsPromptAcrossProcesses(t *testing.T) {
	out := runPrompt(t, false)
	if out.llmCalls != 2 {
		t.Fatalf("the fake model answered %d calls, want 2", out.llmCalls)
	}
	var prompts []span
	for _, s := range out.spans {
		if s.Name == telemetry.SpanPrompt && s.Attrs[telemetry.AttrSession] == "s1" {
			prompts = append(prompts, s)
		}
	}
	if len(prompts) != 1 {
		t.Fatalf("%d prompt spans, want 1; got spans:\n%s", len(prompts), dump(out.spans))
	}
	p := prompts[0]
	if p.Parent != "" || p.Service != "orchestrator" || p.Attrs[telemetry.AttrStatus] != telemetry.StatusOK {
		t.Fatalf("prompt span %+v: want a root span of the orchestrator with status ok", p)
	}
	byName := map[string][]span{}
	ids := map[string]span{}
	for _, s := range out.spans {
		if s.Trace == p.Trace {
			byName[s.Name] = append(byName[s.Name], s)
			ids[s.ID] = s
		}
	}
	turns, llms, tools, execs, appends := byName[telemetry.SpanTurn], byName[telemetry.SpanLLM], byName[telemetry.SpanTool], byName[telemetry.SpanToolRun], byName[telemetry.SpanAppend]
	if len(turns) != 2 || len(llms) != 2 || len(tools) != 1 || len(execs) != 1 || len(appends) < 4 {
		t.Fatalf("trace has %d turns, %d llm requests, %d tool calls, %d executions, %d appends; want 2, 2, 1, 1, ≥4:\n%s",
			len(turns), len(llms), len(tools), len(execs), len(appends), dump(out.spans))
	}
	for _, s := range turns {
		if s.Parent != p.ID {
			t.Errorf("turn %s: parent %s, want the prompt %s", s.ID, s.Parent, p.ID)
		}
	}
	var toolTurn string
	stops := map[string]bool{}
	for _, s := range llms {
		parent, ok := ids[s.Parent]
		if !ok || parent.Name != telemetry.SpanTurn {
			t.Errorf("llm request %s: parent %s is not a turn", s.ID, s.Parent)
		}
		if s.Attrs[telemetry.AttrProvider] != "openai-compatible" || s.Attrs[telemetry.AttrModel] != "fake-model" ||
			s.Attrs[telemetry.AttrInputTokens] != "120" || s.Attrs[telemetry.AttrOutputTokens] != "15" || s.Attrs[telemetry.AttrSession] != "s1" {
			t.Errorf("llm request attributes %v", s.Attrs)
		}
		stops[s.Attrs[telemetry.AttrStopReason]] = true
		if s.Attrs[telemetry.AttrStopReason] == "toolUse" {
			toolTurn = s.Parent
		}
	}
	if !stops["toolUse"] || !stops["stop"] {
		t.Errorf("llm stop reasons %v, want toolUse and stop", stops)
	}
	tc := tools[0]
	if tc.Parent != toolTurn || tc.Attrs[telemetry.AttrTool] != "ls" || tc.Attrs[telemetry.AttrStatus] != telemetry.StatusOK {
		t.Errorf("tool call %+v: want ls, ok, under the turn %s whose reply called it", tc, toolTurn)
	}
	ex := execs[0]
	if ex.Service != "toolrunner" || ex.Parent != tc.ID || ex.Attrs[telemetry.AttrTool] != "ls" || ex.Attrs[telemetry.AttrWorker] != "runner1" {
		t.Errorf("execution %+v: want the toolrunner's span under the tool call %s", ex, tc.ID)
	}
	// The provider's log lines name the session, turn and trace.
	var lines int
	for _, l := range strings.Split(out.logs, "\n") {
		var line map[string]any
		if json.Unmarshal([]byte(l), &line) != nil || line["msg"] != "stream done" {
			continue
		}
		lines++
		if line[telemetry.KeySession] != "s1" || line[telemetry.KeyTurn] == nil || line[telemetry.KeyTrace] != p.Trace {
			t.Errorf("log line %s: want session s1, a turn and trace %s", l, p.Trace)
		}
	}
	if lines != 2 {
		t.Errorf("%d stream done lines, want 2:\n%s", lines, out.logs)
	}
	for _, s := range appends {
		if s.Attrs[telemetry.AttrEntryType] == "custom" {
			continue // the system prompt record, appended under the model call it precedes
		}
		if s.Parent != p.ID || s.Attrs[telemetry.AttrStatus] != telemetry.StatusOK || s.Attrs[telemetry.AttrEntrySeq] == "" {
			t.Errorf("append %+v: want ok with a sequence, under the prompt", s)
		}
	}
}

func dump(spans []span) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Service + " " + s.Name + " trace=" + s.Trace[:8] + " id=" + s.ID + " parent=" + s.Parent + "\n")
	}
	return b.String()
}
