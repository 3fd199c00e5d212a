package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/ssetest"
	"github.com/cairn-agents/cairn/pkg/provider/models"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseRef(t *testing.T) {
	for ref, want := range map[string][2]string{
		"anthropic/claude-sonnet-4-5":        {"anthropic", "claude-sonnet-4-5"},
		"ollama/qwen3:8b":                    {"ollama", "qwen3:8b"},
		"openrouter/meta-llama/llama-3.1-8b": {"openrouter", "meta-llama/llama-3.1-8b"},
		"scripted/demo":                      {"scripted", "demo"},
	} {
		p, id, err := ParseRef(ref)
		if err != nil || p != want[0] || id != want[1] {
			t.Errorf("ParseRef(%q) = %q, %q, %v", ref, p, id, err)
		}
	}
	for _, bad := range []string{"", "claude", "/x", "anthropic/", " anthropic/x"} {
		if _, _, err := ParseRef(bad); !errors.Is(err, ErrBadRef) || !strings.Contains(err.Error(), "provider/model") {
			t.Errorf("ParseRef(%q) = %v, want ErrBadRef", bad, err)
		}
	}
}

func TestMissingKeyIsAuthErrorNamingTheVariable(t *testing.T) {
	vars := map[string]string{}
	r, err := New(Config{Getenv: env(vars)})
	if err != nil {
		t.Fatal(err)
	}
	for ref, v := range map[string]string{"anthropic/claude-haiku-4-5": EnvAnthropicKey, "openai/gpt-5": EnvOpenAIKey, "openai/gpt-4o": EnvOpenAIKey} {
		_, _, err := r.Resolve(ref)
		if !errors.Is(err, llm.ErrAuth) || !strings.Contains(err.Error(), v) {
			t.Errorf("Resolve(%s) = %v, want an auth error naming %s", ref, err, v)
		}
	}
	vars[EnvAnthropicKey] = "k" // a failed build is not cached
	if _, m, err := r.Resolve("anthropic/claude-haiku-4-5"); err != nil || m.ContextWindow != 200000 {
		t.Fatalf("after setting the key: %+v, %v", m, err)
	}
}

func TestUnknownProviderAndModel(t *testing.T) {
	r, _ := New(Config{Getenv: env(map[string]string{EnvAnthropicKey: "k"})})
	_, _, err := r.Resolve("mistral/large")
	if !errors.Is(err, ErrUnknownProvider) || !strings.Contains(err.Error(), "anthropic, openai") {
		t.Errorf("err = %v", err)
	}
	if _, _, err := r.Resolve("anthropic/claude-2"); !errors.Is(err, models.ErrUnknownModel) {
		t.Errorf("err = %v, want ErrUnknownModel", err)
	}
}

func TestRegisterExtraProvider(t *testing.T) {
	r, _ := New(Config{Getenv: env(nil)})
	var got string
	err := r.Register("scripted", func(id string) (llm.Provider, llm.Model, error) {
		got = id
		return nil, llm.Model{Provider: "scripted", ID: id, ContextWindow: 200000, MaxOutput: 8192}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, m, err := r.Resolve("scripted/demo"); err != nil || m.Ref() != "scripted/demo" || got != "demo" {
		t.Fatalf("Resolve(scripted/demo) = %+v, %v", m, err)
	}
	if err := r.Register("scripted", func(string) (llm.Provider, llm.Model, error) { return nil, llm.Model{}, nil }); err == nil {
		t.Error("registered scripted twice")
	}
	if err := r.Register("anthropic", func(string) (llm.Provider, llm.Model, error) { return nil, llm.Model{}, nil }); err == nil {
		t.Error("replaced a built-in provider")
	}
	if err := r.Register("Bad Name", func(string) (llm.Provider, llm.Model, error) { return nil, llm.Model{}, nil }); err == nil {
		t.Error("accepted a bad name")
	}
	if !strings.Contains(strings.Join(r.Providers(), ","), "scripted") {
		t.Errorf("Providers() = %v", r.Providers())
	}
}

func TestEndpointValidation(t *testing.T) {
	for _, tc := range []struct {
		e    Endpoint
		want string
	}{
		{Endpoint{Name: "Ollama", BaseURL: "http://x"}, `provider name "Ollama"`},
		{Endpoint{Name: "openai", BaseURL: "http://x"}, "built-in"},
		{Endpoint{Name: "local", BaseURL: "localhost:8080"}, `baseUrl "localhost:8080"`},
		{Endpoint{Name: "local", BaseURL: "http://x", KeyEnv: "sk-123-abc"}, `keyEnv "sk-123-abc"`},
	} {
		if _, err := New(Config{Endpoints: []Endpoint{tc.e}}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.e, err, tc.want)
		}
	}
	dup := []Endpoint{{Name: "a", BaseURL: "http://x"}, {Name: "a", BaseURL: "http://y"}}
	if _, err := New(Config{Endpoints: dup}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate endpoints: %v", err)
	}
}

func TestLoadEndpoints(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "endpoints.json")
	_ = os.WriteFile(good, []byte(`{"endpoints": [{"name": "ollama", "baseUrl": "http://localhost:11434/v1", "contextWindow": 40960}]}`), 0o600)
	eps, err := LoadEndpoints(good)
	if err != nil || len(eps) != 1 || eps[0].ContextWindow != 40960 {
		t.Fatalf("LoadEndpoints = %+v, %v", eps, err)
	}
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"endpoints": [{"name": "ollama", "baseUrl": "http://x", "apiKey": "sk-1"}]}`), 0o600)
	if _, err := LoadEndpoints(bad); err == nil || !strings.Contains(err.Error(), `unknown field "apiKey"`) {
		t.Fatalf("a key in the file must be refused: %v", err)
	}
}

// TestRouting checks that each reference reaches the right API at the
// right base URL, with the right key.
func TestRouting(t *testing.T) {
	anth := ssetest.Serve(t, ssetest.Reply{Body: ssetest.SSE(
		"message_start", `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1,"output_tokens":1}}}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
		"message_stop", `{"type":"message_stop"}`)})
	oa := ssetest.Serve(t, ssetest.Reply{Body: ssetest.Data(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]")})
	local := ssetest.Serve(t, ssetest.Reply{Body: ssetest.Data(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]")})
	r, err := New(Config{
		Getenv:    env(map[string]string{EnvAnthropicKey: "ka", EnvAnthropicBaseURL: anth.URL, EnvOpenAIKey: "ko", EnvOpenAIBaseURL: oa.URL + "/v1", "LOCAL_KEY": "kl"}),
		Endpoints: []Endpoint{{Name: "local", BaseURL: local.URL + "/v1", KeyEnv: "LOCAL_KEY", ContextWindow: 8192}},
	})
	if err != nil {
		t.Fatal(err)
	}
	stream := func(ref string) llm.Model {
		t.Helper()
		p, m, err := r.Resolve(ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Stream(context.Background(), &llm.Request{Model: m, Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent("hi")}}}, nil); err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		return m
	}
	stream("anthropic/claude-haiku-4-5")
	if h := anth.Last(t).Header; h.Get("Authorization")+h.Get("X-Api-Key") == "" || anth.Last(t).Path != "/v1/messages" {
		t.Errorf("anthropic request: %s %v", anth.Last(t).Path, h)
	}
	stream("openai/gpt-4o") // api openai-completions
	if got := oa.Last(t); got.Path != "/v1/chat/completions" || got.Header.Get("Authorization") != "Bearer ko" {
		t.Errorf("openai chat request: %s %v", got.Path, got.Header)
	}
	m := stream("local/my-model")
	if got := local.Last(t); got.Path != "/v1/chat/completions" || got.Header.Get("Authorization") != "Bearer kl" {
		t.Errorf("endpoint request: %s %v", got.Path, got.Header)
	}
	if m.ContextWindow != 8192 || m.BaseURL != local.URL+"/v1" || m.Provider != "local" {
		t.Errorf("endpoint model = %+v", m)
	}
	// openai/gpt-5 uses the Responses API; the chat server answers 404.
	p, m5, _ := r.Resolve("openai/gpt-5")
	_, err = p.Stream(context.Background(), &llm.Request{Model: m5, Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent("hi")}}}, nil)
	if got := oa.Last(t); got.Path != "/v1/responses" {
		t.Errorf("gpt-5 went to %s (%v)", got.Path, err)
	}
}

func TestCompatibleEndpointFromEnvironment(t *testing.T) {
	r, err := New(Config{Getenv: env(map[string]string{EnvCompatibleBaseURL: "http://localhost:8000/v1"})})
	if err != nil {
		t.Fatal(err)
	}
	_, m, err := r.Resolve("openai-compatible/llama3.2")
	if err != nil || m.ContextWindow != models.CompatibleContextWindow || m.BaseURL != "http://localhost:8000/v1" || m.Price != (llm.Price{}) {
		t.Fatalf("without a key (local servers take none): %+v, %v", m, err)
	}
}

// TestKeysNeverLeak runs streams of every provider with fake keys, including
// servers that echo the key in an error, and searches the messages, the
// deltas, the errors and the debug logs for the keys.
func TestKeysNeverLeak(t *testing.T) {
	keys := map[string]string{
		EnvAnthropicKey: "sk-ant-api03-LEAKCHECK-aaaaaaaaaaaaaaaa",
		EnvOpenAIKey:    "sk-proj-LEAKCHECK-bbbbbbbbbbbbbbbbbbbb",
		"LOCAL_KEY":     "local-LEAKCHECK-cccccccccccccccccccc",
	}
	type run struct {
		ref   string
		reply ssetest.Reply
	}
	echo := func(k string) string {
		return `{"error":{"message":"Incorrect API key provided: ` + keys[k] + `","type":"invalid_request_error","code":"invalid_api_key"}}`
	}
	anthOK := ssetest.SSE("message_start", `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`, "message_stop", `{"type":"message_stop"}`)
	chatOK := ssetest.Data(`{"id":"c","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`, `{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]")
	respOK := ssetest.SSE("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"hi"}`,
		"response.completed", `{"type":"response.completed","response":{"id":"r","status":"completed","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}}`)
	runs := []run{
		{"anthropic/claude-haiku-4-5", ssetest.Reply{Body: anthOK}},
		{"anthropic/claude-haiku-4-5", ssetest.Reply{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + keys[EnvAnthropicKey] + `"}}`}},
		{"anthropic/claude-haiku-4-5", ssetest.Reply{Cut: true, Body: anthOK[:200]}},
		{"openai/gpt-4o", ssetest.Reply{Body: chatOK}},
		{"openai/gpt-4o", ssetest.Reply{Status: 401, Body: echo(EnvOpenAIKey)}},
		{"openai/gpt-5", ssetest.Reply{Body: respOK}},
		{"openai/gpt-5", ssetest.Reply{Status: 401, Body: echo(EnvOpenAIKey)}},
		{"openai/gpt-5", ssetest.Reply{Body: ssetest.SSE("error", `{"type":"error","code":"invalid_api_key","message":"bad key `+keys[EnvOpenAIKey]+`"}`)}},
		{"local/m", ssetest.Reply{Body: chatOK}},
		{"local/m", ssetest.Reply{Status: 401, Body: echo("LOCAL_KEY")}},
		{"local/m", ssetest.Reply{Body: ssetest.Data(`{"error":{"message":"key ` + keys["LOCAL_KEY"] + ` revoked","code":401}}`)}},
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var seen []string
	for _, rn := range runs {
		srv := ssetest.Serve(t, rn.reply)
		vars := map[string]string{EnvAnthropicBaseURL: srv.URL, EnvOpenAIBaseURL: srv.URL + "/v1"}
		for k, v := range keys {
			vars[k] = v
		}
		r, err := New(Config{Getenv: env(vars), Logger: log, Endpoints: []Endpoint{{Name: "local", BaseURL: srv.URL + "/v1", KeyEnv: "LOCAL_KEY"}}})
		if err != nil {
			t.Fatal(err)
		}
		p, m, err := r.Resolve(rn.ref)
		if err != nil {
			t.Fatal(err)
		}
		var d ssetest.Deltas
		msg, err := p.Stream(context.Background(), &llm.Request{Model: m, Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent("hi")}}}, d.Add)
		mj, _ := json.Marshal(msg)
		dj, _ := json.Marshal(d.List)
		seen = append(seen, string(mj), string(dj))
		if err != nil {
			seen = append(seen, err.Error())
			log.Error("stream failed", "ref", rn.ref, "err", err)
		}
		if !strings.Contains(srv.Last(t).Header.Get("Authorization")+srv.Last(t).Header.Get("X-Api-Key"), "LEAKCHECK") {
			t.Errorf("%s: the key was not sent", rn.ref)
		}
	}
	seen = append(seen, logs.String())
	if !strings.Contains(logs.String(), "stream start") || !strings.Contains(logs.String(), "[redacted]") {
		t.Fatalf("the logs are not what the test expects to search:\n%s", logs.String())
	}
	for _, k := range keys {
		ssetest.AssertNoSecret(t, k, seen...)
		ssetest.AssertNoSecret(t, k[len(k)-20:], seen...)
	}
}

func TestBadBaseURLFromEnvironment(t *testing.T) {
	r, _ := New(Config{Getenv: env(map[string]string{EnvAnthropicKey: "k", EnvAnthropicBaseURL: "api.example.com", EnvOpenAIKey: "k", EnvOpenAIBaseURL: "ftp://x"})})
	for _, ref := range []string{"anthropic/claude-haiku-4-5", "openai/gpt-5"} {
		if _, _, err := r.Resolve(ref); err == nil || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("Resolve(%s) with a bad base URL = %v", ref, err)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	mp, ep := filepath.Join(dir, "models.json"), filepath.Join(dir, "endpoints.json")
	_ = os.WriteFile(mp, []byte(`{"models": [{"provider": "ollama", "id": "qwen3:8b", "contextWindow": 40960, "maxOutput": 8192, "price": {}}]}`), 0o600)
	_ = os.WriteFile(ep, []byte(`{"endpoints": [{"name": "ollama", "baseUrl": "http://localhost:11434/v1"}]}`), 0o600)
	cfg, err := LoadConfig(mp, ep)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Getenv = env(nil)
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, m, err := r.Resolve("ollama/qwen3:8b"); err != nil || m.ContextWindow != 40960 || m.BaseURL != "http://localhost:11434/v1" {
		t.Fatalf("registry entry for an endpoint model: %+v, %v", m, err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "nope.json"), ""); err == nil {
		t.Fatal("a missing models file was accepted")
	}
	if cfg, err := LoadConfig("", ""); err != nil || cfg.Models == nil || cfg.Endpoints != nil {
		t.Fatalf("no files: %+v, %v", cfg, err)
	}
}
