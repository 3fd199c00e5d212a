package models

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

func TestBuiltinParsesAndPricesClaude(t *testing.T) {
	r := Builtin()
	m, err := r.Lookup("anthropic", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if m.ContextWindow != 200000 || m.API != APIAnthropicMessages || !m.Reasoning || !m.Images {
		t.Fatalf("claude-sonnet-4-5 = %+v", m)
	}
	u := events.Usage{Input: 1_000_000, Output: 1_000_000, CacheRead: 1_000_000, CacheWrite: 1_000_000}
	m.Cost(&u)
	if u.Cost.Total != 3+15+0.3+3.75 {
		t.Fatalf("cost of a million of each = %v, want 22.05", u.Cost.Total)
	}
	for _, m := range r.Models() {
		if m.Provider != "anthropic" && m.Provider != "openai" {
			t.Errorf("builtin model %s of an unexpected provider", m.Ref())
		}
	}
}

func TestUnknownModelNamesKnownOnes(t *testing.T) {
	_, err := Builtin().Lookup("anthropic", "claude-nope")
	if !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("err = %v, want ErrUnknownModel", err)
	}
	for _, want := range []string{"anthropic/claude-nope", "claude-haiku-4-5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	_, err = Builtin().Lookup("mistral", "x")
	if !errors.Is(err, ErrUnknownModel) || !strings.Contains(err.Error(), `provider "mistral"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestOperatorFileAddsAndReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "models.json")
	data := `{"models": [
	  {"provider": "anthropic", "id": "claude-haiku-4-5", "contextWindow": 100000, "maxOutput": 1000, "price": {"input": 9, "output": 9, "cacheRead": 0, "cacheWrite": 0}},
	  {"provider": "ollama", "id": "qwen3:8b", "api": "openai-completions", "contextWindow": 40960, "maxOutput": 8192, "price": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}
	]}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := r.Lookup("anthropic", "claude-haiku-4-5"); m.ContextWindow != 100000 || m.Price.Input != 9 {
		t.Errorf("override not applied: %+v", m)
	}
	if m, err := r.Lookup("ollama", "qwen3:8b"); err != nil || m.ContextWindow != 40960 {
		t.Errorf("added model: %+v, %v", m, err)
	}
	if _, err := r.Lookup("anthropic", "claude-sonnet-4-5"); err != nil {
		t.Errorf("untouched builtin model lost: %v", err)
	}
}

func TestBadFilesNameTheProblem(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"models": [{"provider": "a", "id": "m", "contextWindow": 0, "maxOutput": 1, "price": {}}]}`, "contextWindow 0"},
		{`{"models": [{"provider": "a", "id": "m", "contextWindow": 10, "maxOutput": 11, "price": {}}]}`, "maxOutput 11"},
		{`{"models": [{"provider": "a", "id": "", "contextWindow": 10, "maxOutput": 1, "price": {}}]}`, "id is required"},
		{`{"models": [{"provider": "a", "id": "m", "contextWindow": 10, "maxOutput": 1, "price": {"input": -1}}]}`, "negative"},
		{`{"models": [{"provider": "a", "id": "m", "api": "grpc", "contextWindow": 10, "maxOutput": 1, "price": {}}]}`, `api "grpc"`},
		{`{"models": [{"provider": "a", "id": "m", "contextWindow": 10, "maxOutput": 1, "prize": {}}]}`, `unknown field "prize"`},
		{`{"models": [{"provider": "a", "id": "m", "contextWindow": 10, "maxOutput": 1}, {"provider": "a", "id": "m", "contextWindow": 10, "maxOutput": 1}]}`, "a/m is listed twice"},
	} {
		_, err := Parse("ops.json", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ops.json") {
			t.Errorf("Parse(%s) = %v, want an error naming ops.json and %q", tc.data, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("Load of a missing file = %v", err)
	}
}

func TestCompatibleDefaults(t *testing.T) {
	m := Compatible("ollama", "llama3.2", "http://localhost:11434/v1", 0, 0)
	if m.ContextWindow != CompatibleContextWindow || m.MaxOutput != CompatibleMaxOutput || m.Price != (llm.Price{}) || m.API != APIOpenAICompletions {
		t.Fatalf("defaults = %+v", m)
	}
	m = Compatible("vllm", "x", "", 4096, 8192)
	if m.ContextWindow != 4096 || m.MaxOutput != 4096 {
		t.Fatalf("maxOutput should be capped by the window: %+v", m)
	}
}
