package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/ssetest"
)

func paramsJSON(t *testing.T, req *llm.Request) string {
	t.Helper()
	p, _, err := buildParams(req)
	if err != nil {
		t.Fatal(err)
	}
	b, mErr := json.Marshal(p)
	if mErr != nil {
		t.Fatal(mErr)
	}
	var v any
	_ = json.Unmarshal(b, &v)
	return ssetest.JSON(v)
}

func TestAdaptiveThinkingForNewerModels(t *testing.T) {
	m := llm.Model{Provider: "anthropic", ID: "claude-opus-4-6", ContextWindow: 200000, MaxOutput: 128000, Reasoning: true}
	got := paramsJSON(t, &llm.Request{Model: m, ThinkingLevel: "high", MaxTokens: 8000,
		Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent("hi")}}})
	for _, want := range []string{`"thinking":{"display":"summarized","type":"adaptive"}`, `"output_config":{"effort":"high"}`, `"max_tokens":8000`} {
		if !strings.Contains(got, want) {
			t.Errorf("params %s lack %s", got, want)
		}
	}
	for id, want := range map[string]bool{"claude-opus-4-6": true, "claude-sonnet-4-6": true, "claude-opus-5": true,
		"claude-sonnet-4-5": false, "claude-haiku-4-5-20251001": false, "claude-opus-4-1": false, "claude-3-7-sonnet-latest": false, "claude-sonnet-4-20250514": false} {
		if adaptive(id) != want {
			t.Errorf("adaptive(%s) = %v, want %v", id, !want, want)
		}
	}
}

func TestThinkingLevels(t *testing.T) {
	m := llm.Model{Provider: "anthropic", ID: "claude-haiku-4-5", ContextWindow: 200000, MaxOutput: 8000, Reasoning: true}
	req := &llm.Request{Model: m, ThinkingLevel: "xhigh", Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent("hi")}}}
	// 8000 + 32768 exceeds the model's 8000: max_tokens stays at the limit
	// and the budget shrinks below it.
	if got := paramsJSON(t, req); !strings.Contains(got, `"max_tokens":8000`) || !strings.Contains(got, `"budget_tokens":6976`) {
		t.Errorf("params = %s", got)
	}
	req.ThinkingLevel = "ultra"
	if _, _, err := buildParams(req); err == nil || err.Kind != llm.KindInvalidRequest || !strings.Contains(err.Message, `"ultra"`) {
		t.Errorf("unknown level: %v", err)
	}
	m.Reasoning = false
	req.Model, req.ThinkingLevel = m, "high"
	if got := paramsJSON(t, req); strings.Contains(got, "thinking") {
		t.Errorf("a model without reasoning got thinking: %s", got)
	}
}

func TestHistoryConversion(t *testing.T) {
	m := model(t)
	other := events.Message{Role: events.RoleAssistant, API: "openai-responses", Provider: "openai", Model: "gpt-5", StopReason: events.StopEnd,
		Content: events.Content{Blocks: []events.Block{{Type: events.BlockThinking, Thinking: "their thoughts", ThinkingSignature: `{"id":"rs_1"}`}, events.TextBlock("their answer")}}}
	mine := events.Message{Role: events.RoleAssistant, API: API, Provider: "anthropic", Model: m.ID, StopReason: events.StopEnd,
		Content: events.Content{Blocks: []events.Block{{Type: events.BlockThinking, Redacted: true, ThinkingSignature: "EmwKAhgB"}, events.TextBlock("mine")}}}
	got := paramsJSON(t, &llm.Request{Model: m, Messages: []events.Message{
		{Role: events.RoleUser, Content: events.TextContent("a")}, other,
		{Role: events.RoleUser, Content: events.TextContent("b")}, mine,
		{Role: events.RoleUser, Content: events.TextContent("c")}}})
	want := `"messages":[{"content":[{"text":"a","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"their thoughts","type":"text"},{"text":"their answer","type":"text"}],"role":"assistant"},` +
		`{"content":[{"text":"b","type":"text"}],"role":"user"},` +
		`{"content":[{"data":"EmwKAhgB","type":"redacted_thinking"},{"text":"mine","type":"text"}],"role":"assistant"},` +
		`{"content":[{"cache_control":{"type":"ephemeral"},"text":"c","type":"text"}],"role":"user"}]`
	if !strings.Contains(got, want) {
		t.Errorf("params:\n got %s\nwant ...%s...", got, want)
	}
	_, _, err := buildParams(&llm.Request{Model: m, Messages: []events.Message{{Role: events.RoleUser,
		Content: events.Content{Blocks: []events.Block{{Type: events.BlockImage, MimeType: "image/png", Blob: "sha256-abc"}}}}}})
	if err == nil || err.Kind != llm.KindInvalidRequest || !strings.Contains(err.Message, "messages[0]: content[0]") || !strings.Contains(err.Message, "sha256-abc") {
		t.Errorf("image without data: %v", err)
	}
	_, _, err = buildParams(&llm.Request{Model: m, Messages: []events.Message{{Role: events.RoleCustom, CustomType: "x"}}})
	if err == nil || !strings.Contains(err.Message, `role "custom"`) {
		t.Errorf("custom role: %v", err)
	}
}

func TestToolIDsFromOtherProviders(t *testing.T) {
	m := model(t)
	got := paramsJSON(t, &llm.Request{Model: m, Messages: []events.Message{
		{Role: events.RoleUser, Content: events.TextContent("a")},
		{Role: events.RoleAssistant, API: "openai-responses", Provider: "openai", Model: "gpt-5", StopReason: events.StopToolUse,
			Content: events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: "call_1|fc_1", Name: "ls", Arguments: json.RawMessage(`{}`)}}}},
		{Role: events.RoleToolResult, ToolCallID: "call_1|fc_1", ToolName: "ls", Content: events.TextContent("x")}}})
	if !strings.Contains(got, `"id":"call_1_fc_1"`) || !strings.Contains(got, `"tool_use_id":"call_1_fc_1"`) {
		t.Errorf("ids not mapped alike: %s", got)
	}
}
