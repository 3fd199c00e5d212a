package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/pkg/tool"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpansOfARunAndACompaction checks the span tree a run leaves (prompt →
// turn → llm request and tool call) with its attributes and no content,
// and the span of a manual compaction.
func TestSpansOfARunAndACompaction(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev); _ = tp.Shutdown(context.Background()) })
	telemetry.SetContent(false)

	echo := newTool("echo", func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("TOOL-OUTPUT"), nil })
	calls := 0
	f := newFixture(t, `{"defaults":{"usage":{"input":100,"output":20}},"rules":[
		{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"name":"echo","arguments":{}}]}},
		{"reply":{"text":"MODEL-REPLY"}}]}`, harness.Config{Compactor: compactor(&calls)}, echo)
	if err := f.h.Prompt(context.Background(), user("PROMPT-TEXT")); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
		for _, a := range s.Attributes() {
			v := a.Value.String()
			for _, c := range []string{"PROMPT-TEXT", "MODEL-REPLY", "TOOL-OUTPUT"} {
				if strings.Contains(v, c) {
					t.Errorf("span %s attribute %s carries content %q with content export off", s.Name(), a.Key, c)
				}
			}
		}
	}
	prompts, turns, llms, tools, comps := byName[telemetry.SpanPrompt], byName[telemetry.SpanTurn], byName[telemetry.SpanLLM], byName[telemetry.SpanTool], byName[telemetry.SpanCompact]
	if len(prompts) != 1 || len(turns) != 2 || len(llms) != 2 || len(tools) != 1 || len(comps) != 1 {
		t.Fatalf("spans: %d prompt, %d turn, %d llm, %d tool, %d compaction; want 1, 2, 2, 1, 1", len(prompts), len(turns), len(llms), len(tools), len(comps))
	}
	p := prompts[0].SpanContext().SpanID()
	turnIDs := map[string]bool{}
	for _, s := range turns {
		if s.Parent().SpanID() != p {
			t.Errorf("turn under %s, want the prompt", s.Parent().SpanID())
		}
		turnIDs[s.SpanContext().SpanID().String()] = true
	}
	for _, s := range append(llms, tools...) {
		if !turnIDs[s.Parent().SpanID().String()] {
			t.Errorf("%s is not under a turn", s.Name())
		}
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[string]string {
		m := map[string]string{}
		for _, a := range s.Attributes() {
			m[string(a.Key)] = a.Value.String()
		}
		return m
	}
	if a := attrs(llms[0]); a[telemetry.AttrProvider] != "scripted" || a[telemetry.AttrModel] != "one" || a[telemetry.AttrInputTokens] != "100" ||
		a[telemetry.AttrStopReason] != string(events.StopToolUse) || a[telemetry.AttrSession] != "s1" {
		t.Errorf("llm attributes %v", a)
	}
	if a := attrs(tools[0]); a[telemetry.AttrTool] != "echo" || a[telemetry.AttrStatus] != telemetry.StatusOK {
		t.Errorf("tool attributes %v", a)
	}
	if a := attrs(comps[0]); a["cairn.compaction.reason"] != "manual" || a[telemetry.AttrStatus] != telemetry.StatusOK || comps[0].Parent().IsValid() {
		t.Errorf("compaction span %v (parent %v): want a root span, reason manual, ok", a, comps[0].Parent())
	}
}
