//go:build live

// The live smoke tests call the real APIs with the keys in the environment.
// They never run in CI: `go test -tags live -run TestLive ./pkg/provider/registry/`
// (docs/providers.md). Each test fails, naming the variable, when its key is
// missing; select the ones you have keys for with -run.

package registry

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

func liveModel(t *testing.T, envVar, def string) string {
	if m := os.Getenv(envVar); m != "" {
		return m
	}
	return def
}

func liveRegistry(t *testing.T, keyVar string) *Registry {
	t.Helper()
	if os.Getenv(keyVar) == "" {
		t.Fatalf("set %s to run this live test", keyVar)
	}
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func liveCall(t *testing.T, r *Registry, ref string, thinking string, tools []events.ToolSpec, prompt string) (events.Message, []events.Delta) {
	t.Helper()
	p, m, err := r.Resolve(ref)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var deltas []events.Delta
	msg, err := p.Stream(ctx, &llm.Request{Model: m, ThinkingLevel: thinking, Tools: tools, MaxTokens: 4096,
		Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent(prompt)}}},
		func(d events.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatalf("%s: %v (kind %v)", ref, err, llm.KindOf(err))
	}
	if msg.Usage == nil || msg.Usage.Input == 0 || msg.Usage.Output == 0 {
		t.Errorf("%s: usage not reported: %+v", ref, msg.Usage)
	}
	out, _ := json.Marshal(msg)
	t.Logf("%s: %s", ref, out)
	return msg, deltas
}

var clockTool = []events.ToolSpec{{Name: "get_time", Description: "Returns the current time in a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}

func livePong(t *testing.T, ref, thinking string) {
	r := liveRegistry(t, map[bool]string{true: EnvAnthropicKey, false: EnvOpenAIKey}[strings.HasPrefix(ref, "anthropic/")])
	msg, deltas := liveCall(t, r, ref, thinking, nil, "Reply with the single word pong, in lower case.")
	if msg.StopReason != events.StopEnd || !strings.Contains(strings.ToLower(msg.Content.Text()), "pong") || len(deltas) == 0 {
		t.Errorf("%s: want a streamed pong, got %q (stop %s, %d deltas)", ref, msg.Content.Text(), msg.StopReason, len(deltas))
	}
	msg, _ = liveCall(t, r, ref, "", clockTool, "What time is it in Paris? Use the tool.")
	calls := msg.ToolCalls()
	if msg.StopReason != events.StopToolUse || len(calls) == 0 || calls[0].Name != "get_time" || !strings.Contains(string(calls[0].Arguments), "city") {
		t.Errorf("%s: want a get_time call, got %+v (stop %s)", ref, calls, msg.StopReason)
	}
}

func TestLiveAnthropic(t *testing.T) {
	livePong(t, "anthropic/"+liveModel(t, "CAIRN_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5"), "low")
}

func TestLiveOpenAIResponses(t *testing.T) {
	livePong(t, "openai/"+liveModel(t, "CAIRN_LIVE_OPENAI_MODEL", "gpt-5-mini"), "low")
}

func TestLiveOpenAIChat(t *testing.T) {
	livePong(t, "openai/"+liveModel(t, "CAIRN_LIVE_OPENAI_CHAT_MODEL", "gpt-4.1-mini"), "")
}

// TestLiveCompatible needs OPENAI_COMPATIBLE_BASE_URL (and
// OPENAI_COMPATIBLE_API_KEY if the server wants one) and
// CAIRN_LIVE_COMPATIBLE_MODEL, e.g. qwen3:8b on Ollama.
func TestLiveCompatible(t *testing.T) {
	model := os.Getenv("CAIRN_LIVE_COMPATIBLE_MODEL")
	if os.Getenv(EnvCompatibleBaseURL) == "" || model == "" {
		t.Fatalf("set %s and CAIRN_LIVE_COMPATIBLE_MODEL to run this live test", EnvCompatibleBaseURL)
	}
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := liveCall(t, r, "openai-compatible/"+model, "", nil, "Reply with the single word pong, in lower case.")
	if !strings.Contains(strings.ToLower(msg.Content.Text()), "pong") {
		t.Errorf("want pong, got %q", msg.Content.Text())
	}
}
