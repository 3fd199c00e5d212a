package scripted

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

const designExample = `{
  "defaults": {"delayMs": 0, "tokensPerSecond": 0, "usage": {"input": 100, "output": 20}},
  "rules": [
    {"match": {"lastRole": "user", "contains": "list files"},
     "reply": {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"},
     "reply": {"text": "I see the files."}},
    {"match": {"contains": "flaky"}, "times": 1,
     "reply": {"error": {"status": 529, "message": "overloaded_error"}}},
    {"reply": {"text": "ok"}}
  ]
}`

func user(s string) events.Message {
	return events.Message{Role: events.RoleUser, Content: events.TextContent(s)}
}

func call(t *testing.T, p *Provider, msgs ...events.Message) (events.Message, []events.Delta, error) {
	t.Helper()
	var deltas []events.Delta
	msg, err := p.Stream(context.Background(), &llm.Request{Model: p.Model("m"), Messages: msgs}, func(d events.Delta) { deltas = append(deltas, d) })
	return msg, deltas, err
}

func TestDesignExample(t *testing.T) {
	s, err := Parse([]byte(designExample))
	if err != nil {
		t.Fatal(err)
	}
	p := New(s)
	msg, _, err := call(t, p, user("please list files"))
	if err != nil || msg.StopReason != events.StopToolUse {
		t.Fatalf("list files: %v %v", msg.StopReason, err)
	}
	tc := msg.ToolCalls()
	if len(tc) != 1 || tc[0].Name != "ls" || string(tc[0].Arguments) != `{"path": "."}` || tc[0].ID == "" {
		t.Fatalf("tool calls = %+v", tc)
	}
	if msg.Usage == nil || msg.Usage.Input != 100 || msg.Usage.Output != 20 {
		t.Fatalf("usage = %+v", msg.Usage)
	}
	res := events.Message{Role: events.RoleToolResult, ToolName: "ls", ToolCallID: tc[0].ID, Content: events.TextContent("a b")}
	if msg, _, _ := call(t, p, user("list files"), msg, res); msg.Content.Text() != "I see the files." || msg.StopReason != events.StopEnd {
		t.Fatalf("after ls: %q %s", msg.Content.Text(), msg.StopReason)
	}
	msg, _, err = call(t, p, user("a flaky one"))
	if !errors.Is(err, llm.ErrRetryable) || msg.StopReason != events.StopError || msg.ErrorMessage == "" {
		t.Fatalf("flaky: err=%v stop=%s", err, msg.StopReason)
	}
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 529 || le.Message != "overloaded_error" {
		t.Fatalf("flaky error = %#v", err)
	}
	if msg, _, err := call(t, p, user("a flaky one")); err != nil || msg.Content.Text() != "ok" {
		t.Fatalf("times:1 not used up: %q %v", msg.Content.Text(), err)
	}
}

func TestNoRuleIsAClearError(t *testing.T) {
	p := New(mustParse(t, `{"rules":[{"match":{"lastRole":"toolResult"},"reply":{"text":"x"}}]}`))
	_, _, err := call(t, p, user("hello there"))
	if !errors.Is(err, ErrNoRule) || !strings.Contains(err.Error(), `user: "hello there"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	p := New(mustParse(t, `{"rules":[
		{"match":{"contains":"429"},"reply":{"error":{"status":429,"message":"rate limited","retryAfterMs":7000}}},
		{"match":{"contains":"long"},"reply":{"error":{"status":400,"message":"prompt is too long: 210000 tokens > 200000 maximum"}}},
		{"match":{"contains":"auth"},"reply":{"error":{"status":401,"message":"bad key"}}},
		{"reply":{"error":{"status":400,"message":"bad request"}}}]}`))
	cases := []struct {
		text string
		want error
	}{{"429", llm.ErrRetryable}, {"too long", llm.ErrContextOverflow}, {"auth", llm.ErrAuth}, {"x", llm.ErrInvalidRequest}}
	for _, c := range cases {
		_, _, err := call(t, p, user(c.text))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.text, err, c.want)
		}
	}
	_, _, err := call(t, p, user("429"))
	var le *llm.Error
	if !errors.As(err, &le) || le.RetryAfter != 7*time.Second {
		t.Fatalf("retry-after not carried: %#v", err)
	}
}

func TestStreamsAtTheScriptedRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(mustParse(t, `{"defaults":{"delayMs":500},"rules":[{"reply":{"thinking":"hmm.","text":"abcdefghij","tokensPerSecond":2,"usage":"estimate"}}]}`))
		start := time.Now()
		var at []time.Duration
		var text string
		msg, err := p.Stream(context.Background(), &llm.Request{Model: p.Model("m"), SystemPrompt: "12345678", Messages: []events.Message{user("0123456789ab")}}, func(d events.Delta) {
			at = append(at, time.Since(start))
			if d.Kind == events.DeltaText {
				text += d.Delta
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		// thinking: 1 token at 0.5 s; text: 3 tokens at 1.0, 1.5, 2.0 s
		want := []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond}
		if len(at) != len(want) {
			t.Fatalf("deltas at %v, want %v", at, want)
		}
		for i := range want {
			if at[i] != want[i] {
				t.Fatalf("deltas at %v, want %v", at, want)
			}
		}
		if text != "abcdefghij" || msg.Content.Text() != "abcdefghij" || msg.Content.Blocks[0].Thinking != "hmm." {
			t.Fatalf("content = %+v", msg.Content)
		}
		if msg.Usage.Input != 5 || msg.Usage.Output != 3 {
			t.Fatalf("estimated usage = %+v, want input 20/4=5, output 14/4=3", msg.Usage)
		}
	})
}

func TestCancelDuringDelayAborts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(mustParse(t, `{"rules":[{"reply":{"text":"late","delayMs":60000}}]}`))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		msg, err := p.Stream(ctx, &llm.Request{Messages: []events.Message{user("x")}}, func(events.Delta) {})
		if !errors.Is(err, llm.ErrAborted) || msg.StopReason != events.StopAborted {
			t.Fatalf("err=%v stop=%s", err, msg.StopReason)
		}
	})
}

func TestModelLimits(t *testing.T) {
	m := New(mustParse(t, `{"defaults":{"contextWindow":1000,"maxOutput":50},"rules":[{"reply":{}}]}`)).Model("tiny")
	if m.Ref() != "scripted/tiny" || m.ContextWindow != 1000 || m.MaxOutput != 50 {
		t.Fatalf("model = %+v", m)
	}
	if d := New(mustParse(t, `{"rules":[{"reply":{}}]}`)).Model("x"); d.ContextWindow != 200000 {
		t.Fatalf("default window = %d", d.ContextWindow)
	}
}

func TestParseNamesTheField(t *testing.T) {
	cases := map[string]string{
		`{"rules":[]}`:                      "rules: is required",
		`{"rules":[{"reply":{"txt":"x"}}]}`: `rules[0]: unknown field "txt"`,
		`{"rules":[{"reply":{"text":"a"}},{"reply":{"delayMs":"x"}}]}`:      "rules[1].reply.delayMs: want int64, got string",
		`{"rules":[{"match":{"lastRole":"system"},"reply":{}}]}`:            `rules[0].match.lastRole: unknown role "system"`,
		`{"rules":[{"reply":{"error":{"status":200,"message":"x"}}}]}`:      "rules[0].reply.error.status: must be an HTTP error status",
		`{"rules":[{"reply":{"stopReason":"done"}}]}`:                       `rules[0].reply.stopReason: unknown stop reason "done"`,
		`{"rules":[{"reply":{"toolCalls":[{"name":"a b"}]}}]}`:              "rules[0].reply.toolCalls[0].name",
		`{"rules":[{"reply":{"toolCalls":[{"name":"x","arguments":[]}]}}]}`: "rules[0].reply.toolCalls[0].arguments: must be a JSON object",
		`{"rules":[{"reply":{"usage":"guess"}}]}`:                           "rules[0]",
		`{"defaults":{"tokensPerSecond":-1},"rules":[{"reply":{}}]}`:        "defaults.tokensPerSecond: must not be negative",
		`{"rules":[{"times":-1,"reply":{}}]}`:                               "rules[0].times: must not be negative",
		`{"rules":[{"reply":{}}]} trailing`:                                 "unexpected data",
		`{"rulez":[]}`:                                                      `unknown field "rulez"`,
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		if !errors.Is(err, ErrInvalidScript) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(designExample), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil || len(s.Rules) != 4 {
		t.Fatalf("Load: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("missing file: %v", err)
	}
}

func mustParse(t testing.TB, s string) *Script {
	t.Helper()
	sc, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
