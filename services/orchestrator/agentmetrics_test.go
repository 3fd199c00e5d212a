package orchestrator

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func TestAgentMetricsFromHarnessEvents(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newAgentMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	reply := &events.Message{Role: events.RoleAssistant, Provider: "anthropic", Model: "claude", StopReason: events.StopToolUse,
		Usage: &events.Usage{Input: 100, Output: 20, CacheRead: 5, Cost: events.Cost{Total: 0.25}}}
	final := &events.Message{Role: events.RoleAssistant, Provider: "anthropic", Model: "claude", StopReason: events.StopEnd,
		Usage: &events.Usage{Input: 150, Output: 10}}
	for _, ev := range []events.Event{
		{Type: events.EvAgentStart},
		{Type: events.EvTurnStart},
		{Type: events.EvMessageEnd, Message: &events.Message{Role: events.RoleUser, CommandID: "c1"}},
		{Type: events.EvMessageUpdate, Delta: &events.Delta{Kind: events.DeltaText}},
		{Type: events.EvMessageEnd, Message: reply},
		{Type: events.EvToolExecutionStart, ToolCallID: "t1", ToolName: "ls"},
		{Type: events.EvToolExecutionStart, ToolCallID: "t2", ToolName: "bash"},
		{Type: events.EvToolExecutionEnd, ToolCallID: "t2", ToolName: "bash", IsError: true},
		{Type: events.EvToolExecutionEnd, ToolCallID: "t1", ToolName: "ls"},
		{Type: events.EvTurnEnd, Message: reply},
		{Type: events.EvRetryStart},
		{Type: events.EvCompactionStart, Compaction: &events.Compaction{Reason: "overflow"}},
		{Type: events.EvTurnStart},
		{Type: events.EvMessageEnd, Message: final},
		{Type: events.EvTurnEnd, Message: final},
	} {
		m.observe("s1", &ev)
	}
	if got := testutil.ToFloat64(m.running); got != 1 {
		t.Fatalf("running during the run = %v, want 1", got)
	}
	m.observe("s1", &events.Event{Type: events.EvAgentEnd})
	m.observe("s1", &events.Event{Type: events.EvAgentEnd}) // a second end changes nothing
	m.appended(nil)
	m.appended(fmt.Errorf("x: %w", session.ErrConflict))
	m.appended(errors.New("nats down"))

	for name, c := range map[string]struct {
		got  float64
		want float64
	}{
		"running":             {testutil.ToFloat64(m.running), 0},
		"turns toolUse":       {testutil.ToFloat64(m.turns.WithLabelValues("toolUse")), 1},
		"turns stop":          {testutil.ToFloat64(m.turns.WithLabelValues("stop")), 1},
		"llm toolUse":         {testutil.ToFloat64(m.llmRequests.WithLabelValues("anthropic", "claude", "toolUse")), 1},
		"input tokens":        {testutil.ToFloat64(m.llmTokens.WithLabelValues("anthropic", "claude", "input")), 250},
		"output tokens":       {testutil.ToFloat64(m.llmTokens.WithLabelValues("anthropic", "claude", "output")), 30},
		"cache read":          {testutil.ToFloat64(m.llmTokens.WithLabelValues("anthropic", "claude", "cache_read")), 5},
		"cost":                {testutil.ToFloat64(m.llmCost.WithLabelValues("anthropic", "claude")), 0.25},
		"ls ok":               {testutil.ToFloat64(m.toolCalls.WithLabelValues("ls", "ok")), 1},
		"bash error":          {testutil.ToFloat64(m.toolCalls.WithLabelValues("bash", "error")), 1},
		"retries":             {testutil.ToFloat64(m.retries), 1},
		"overflow":            {testutil.ToFloat64(m.compactions.WithLabelValues("overflow")), 1},
		"appends ok":          {testutil.ToFloat64(m.appends.WithLabelValues("ok")), 1},
		"appends conflict":    {testutil.ToFloat64(m.appends.WithLabelValues("conflict")), 1},
		"appends error":       {testutil.ToFloat64(m.appends.WithLabelValues("error")), 1},
		"tool durations":      {float64(testutil.CollectAndCount(m.toolSeconds)), 2},
		"ttft series":         {float64(testutil.CollectAndCount(m.llmTTFT)), 1},
		"prompt→first tokens": {float64(histCount(t, m.promptFirstTok)), 1},
		"turn durations":      {float64(histCount(t, m.turnSeconds)), 2},
		"llm durations":       {float64(histCount(t, m.llmSeconds.WithLabelValues("anthropic", "claude").(prometheus.Histogram))), 2},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}
	if len(m.runs) != 0 {
		t.Fatalf("run state kept after agent_end: %v", m.runs)
	}
}

func histCount(t *testing.T, h prometheus.Histogram) uint64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	h.Collect(ch)
	pb := new(dto.Metric)
	if err := (<-ch).Write(pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetHistogram().GetSampleCount()
}
