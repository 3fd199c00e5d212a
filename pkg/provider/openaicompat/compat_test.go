package openaicompat

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/ssetest"
	"github.com/cairn-agents/cairn/pkg/provider/models"
)

func model() llm.Model { return models.Compatible("ollama", "qwen3:8b", "", 4096, 1024) }

func provider(t testing.TB, url string) llm.Provider {
	p, err := New(Config{Name: "ollama", BaseURL: url + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request() *llm.Request {
	return &llm.Request{Model: model(), Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent("hi")}}}
}

func zero() *events.Usage { u := events.Usage{}; model().Cost(&u); return &u }

func msg(id string, stop events.StopReason, u *events.Usage, errMsg string, blocks ...events.Block) events.Message {
	if blocks == nil {
		blocks = []events.Block{}
	}
	if u == nil {
		u = zero()
	}
	return events.Message{Role: events.RoleAssistant, Content: events.Content{Blocks: blocks}, API: API,
		Provider: "ollama", Model: "qwen3:8b", ResponseID: id, Usage: u, StopReason: stop, ErrorMessage: errMsg}
}

// The deltas and blocks the cases expect.
var text, think, args, call = ssetest.Text, ssetest.Think, ssetest.Args, ssetest.Call

// chunk is a Chat Completions chunk as compatible servers send it; id may be
// empty (some servers send none).
func chunk(id, delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	idf := ""
	if id != "" {
		idf = `"id":"` + id + `",`
	}
	return `{` + idf + `"object":"chat.completion.chunk","created":1,"model":"qwen3:8b","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

func cases() []ssetest.Case {
	used := events.Usage{Input: 20, Output: 7, TotalTokens: 27}
	model().Cost(&used)
	return []ssetest.Case{
		{
			Name: "vLLM/llama.cpp: reasoning_content, usage in the last chunk with choices",
			Reply: ssetest.Reply{Body: ssetest.Data(
				chunk("c1", `{"role":"assistant","content":null,"reasoning_content":"Think"}`, ""),
				chunk("c1", `{"reasoning_content":"ing."}`, ""),
				chunk("c1", `{"content":"Hi"}`, ""),
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3:8b","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":7,"total_tokens":27}}`,
				"[DONE]")},
			Deltas: []events.Delta{think(0, "Think"), think(0, "ing."), text(1, "Hi")},
			Msg:    msg("c1", events.StopEnd, &used, "", events.Block{Type: events.BlockThinking, Thinking: "Thinking."}, events.TextBlock("Hi")),
		},
		{
			Name: "OpenRouter: reasoning field, no usage, no [DONE]",
			Reply: ssetest.Reply{Body: ssetest.Data(
				chunk("gen-1", `{"role":"assistant","content":"","reasoning":"Hmm"}`, ""),
				chunk("gen-1", `{"content":"Yes"}`, ""),
				chunk("gen-1", `{}`, "stop"))},
			Deltas: []events.Delta{think(0, "Hmm"), text(1, "Yes")},
			Msg:    msg("gen-1", events.StopEnd, nil, "", events.Block{Type: events.BlockThinking, Thinking: "Hmm"}, events.TextBlock("Yes")),
		},
		{
			Name: "Ollama: tool calls without ids, arguments whole as objects, at one index, finish stop",
			Reply: ssetest.Reply{Body: ssetest.Data(
				chunk("", `{"role":"assistant","content":"","tool_calls":[{"index":0,"function":{"name":"read","arguments":{"path":"a.go"}}}]}`, ""),
				chunk("", `{"role":"assistant","content":"","tool_calls":[{"index":1,"function":{"name":"ls","arguments":{"path":"."}}}]}`, ""),
				chunk("", `{}`, "stop"), "[DONE]")},
			Deltas: []events.Delta{args(0, "call_1", "read", `{"path":"a.go"}`), args(1, "call_2", "ls", `{"path":"."}`)},
			Msg:    msg("", events.StopToolUse, nil, "", call("call_1", "read", `{"path":"a.go"}`), call("call_2", "ls", `{"path":"."}`)),
		},
		{
			Name: "several tool calls reusing index 0 with interleaved argument deltas",
			Reply: ssetest.Reply{Body: ssetest.Data(
				chunk("c2", `{"tool_calls":[{"index":0,"id":"t1","type":"function","function":{"name":"read","arguments":"{\"path\":"}}]}`, ""),
				chunk("c2", `{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]}`, ""),
				chunk("c2", `{"tool_calls":[{"index":0,"id":"t2","type":"function","function":{"name":"read","arguments":"{\"path\":"}}]}`, ""),
				chunk("c2", `{"tool_calls":[{"index":0,"function":{"arguments":"\"b\"}"}}]}`, ""),
				chunk("c2", `{}`, "tool_calls"), "[DONE]")},
			Deltas: []events.Delta{args(0, "t1", "read", `{"path":`), args(0, "t1", "read", `"a"}`), args(1, "t2", "read", `{"path":`), args(1, "t2", "read", `"b"}`)},
			Msg:    msg("c2", events.StopToolUse, nil, "", call("t1", "read", `{"path":"a"}`), call("t2", "read", `{"path":"b"}`)),
		},
		{
			Name: "whole tool calls at one index without ids",
			Reply: ssetest.Reply{Body: ssetest.Data(
				chunk("c9", `{"tool_calls":[{"index":0,"type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]}`, ""),
				chunk("c9", `{"tool_calls":[{"index":0,"type":"function","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]}`, ""),
				chunk("c9", `{}`, "tool_calls"), "[DONE]")},
			Deltas: []events.Delta{args(0, "call_1", "read", `{"path":"a"}`), args(1, "call_2", "read", `{"path":"b"}`)},
			Msg:    msg("c9", events.StopToolUse, nil, "", call("call_1", "read", `{"path":"a"}`), call("call_2", "read", `{"path":"b"}`)),
		},
		{
			Name:   "finish_reason variants: eos means stop",
			Reply:  ssetest.Reply{Body: ssetest.Data(chunk("c3", `{"content":"done"}`, ""), chunk("c3", `{}`, "eos"), "[DONE]")},
			Deltas: []events.Delta{text(0, "done")},
			Msg:    msg("c3", events.StopEnd, nil, "", events.TextBlock("done")),
		},
		{
			Name:   "finish_reason variants: max_tokens means length",
			Reply:  ssetest.Reply{Body: ssetest.Data(chunk("c3", `{"content":"do"}`, ""), chunk("c3", `{}`, "max_tokens"), "[DONE]")},
			Deltas: []events.Delta{text(0, "do")},
			Msg:    msg("c3", events.StopLength, nil, "", events.TextBlock("do")),
		},
		{
			Name: "OpenRouter: error object mid-stream with an HTTP code",
			Reply: ssetest.Reply{Body: ssetest.Data(chunk("gen-2", `{"content":"Par"}`, ""),
				`{"id":"gen-2","object":"chat.completion.chunk","created":1,"model":"qwen3:8b","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`)},
			Deltas: []events.Delta{text(0, "Par")},
			Msg:    msg("gen-2", events.StopError, nil, "retryable (status 502): Provider returned error", events.TextBlock("Par")),
			Err:    true, Kind: llm.KindRetryable, Status: 502,
		},
		{
			Name:  "429 with retry-after (OpenRouter body)",
			Reply: ssetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "4"}, Body: `{"error":{"message":"Rate limit exceeded: free-models-per-min.","code":429}}`},
			Msg:   msg("", events.StopError, nil, "retryable (status 429): Rate limit exceeded: free-models-per-min."),
			Err:   true, Kind: llm.KindRetryable, Status: 429, RetryAfter: 4e9,
		},
		{
			Name:  "529 overloaded",
			Reply: ssetest.Reply{Status: 529, Body: `{"error":{"message":"overloaded","code":529}}`},
			Msg:   msg("", events.StopError, nil, "retryable (status 529): overloaded"),
			Err:   true, Kind: llm.KindRetryable, Status: 529,
		},
		{
			Name:  "500 with an Ollama string error",
			Reply: ssetest.Reply{Status: 500, Body: `{"error":"llama runner process has terminated: exit status 2"}`},
			Msg:   msg("", events.StopError, nil, "retryable (status 500): llama runner process has terminated: exit status 2"),
			Err:   true, Kind: llm.KindRetryable, Status: 500,
		},
		{
			Name:  "502 with a plain-text body from a proxy",
			Reply: ssetest.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>Bad Gateway</html>"},
			Msg:   msg("", events.StopError, nil, "retryable (status 502): <html>Bad Gateway</html>"),
			Err:   true, Kind: llm.KindRetryable, Status: 502,
		},
		{
			Name:  "404 unknown model (Ollama)",
			Reply: ssetest.Reply{Status: 404, Body: `{"error":{"message":"model \"qwen3:8b\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`},
			Msg:   msg("", events.StopError, nil, `invalid_request (status 404): model "qwen3:8b" not found, try pulling it first`),
			Err:   true, Kind: llm.KindInvalidRequest, Status: 404,
		},
		{
			Name:  "overflow: vLLM",
			Reply: ssetest.Reply{Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`},
			Msg:   msg("", events.StopError, nil, "context_overflow (status 400): This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."),
			Err:   true, Kind: llm.KindContextOverflow, Status: 400,
		},
		{
			Name:  "overflow: llama.cpp server",
			Reply: ssetest.Reply{Status: 400, Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`},
			Msg:   msg("", events.StopError, nil, "context_overflow (status 400): the request exceeds the available context size, try increasing it"),
			Err:   true, Kind: llm.KindContextOverflow, Status: 400,
		},
		{
			Name:  "overflow: OpenRouter",
			Reply: ssetest.Reply{Status: 400, Body: `{"error":{"message":"This endpoint's maximum context length is 4096 tokens. However, you requested about 6000 tokens (6000 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400}}`},
			Msg:   msg("", events.StopError, nil, `context_overflow (status 400): This endpoint's maximum context length is 4096 tokens. However, you requested about 6000 tokens (6000 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.`),
			Err:   true, Kind: llm.KindContextOverflow, Status: 400,
		},
		{
			Name:  "overflow: 413 without a body",
			Reply: ssetest.Reply{Status: 413},
			Msg:   msg("", events.StopError, nil, "context_overflow (status 413)"),
			Err:   true, Kind: llm.KindContextOverflow, Status: 413,
		},
		{
			Name: "silent overflow: a success whose usage exceeds the window stays a success (the harness compacts)",
			Reply: ssetest.Reply{Body: ssetest.Data(chunk("c4", `{"content":"ok"}`, ""),
				`{"id":"c4","object":"chat.completion.chunk","created":1,"model":"qwen3:8b","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5000,"completion_tokens":1,"total_tokens":5001}}`)},
			Deltas: []events.Delta{text(0, "ok")},
			Msg: func() events.Message {
				u := events.Usage{Input: 5000, Output: 1, TotalTokens: 5001}
				model().Cost(&u)
				return msg("c4", events.StopEnd, &u, "", events.TextBlock("ok"))
			}(),
		},
		{
			Name:   "malformed SSE line",
			Reply:  ssetest.Reply{Body: ssetest.Data(chunk("c5", `{"content":"Hel"}`, ""), `{"id":"c5","choices":[{"index":0,"delta":{"content":"lo`)},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    msg("c5", events.StopError, nil, `retryable: chat completions stream: malformed event: invalid character '\n' in string literal`, events.TextBlock("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
		{
			Name:   "connection cut mid-stream",
			Reply:  ssetest.Reply{Cut: true, Body: ssetest.Data(chunk("c6", `{"content":"Hel"}`, ""))},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    msg("c6", events.StopError, nil, "retryable: chat completions stream: unexpected EOF", events.TextBlock("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
		{
			Name:   "stream ends without a finish reason",
			Reply:  ssetest.Reply{Body: ssetest.Data(chunk("c7", `{"content":"Hel"}`, ""))},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    msg("c7", events.StopError, nil, "retryable: the stream ended before a finish_reason", events.TextBlock("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
	}
}

func TestStream(t *testing.T) {
	ssetest.Run(t, cases(), request, provider)
}

func TestAbortMidStream(t *testing.T) {
	deltas, m, _ := ssetest.RunAbort(t, ssetest.Data(chunk("c8", `{"content":"Hel"}`, "")), request(), provider)
	ssetest.AssertDeltas(t, deltas, []events.Delta{text(0, "Hel")})
	ssetest.AssertMessage(t, m, msg("c8", events.StopAborted, nil, "aborted: the request was aborted", events.TextBlock("Hel")))
}

func TestRequestShape(t *testing.T) {
	srv := ssetest.Serve(t, ssetest.Reply{Body: ssetest.Data(chunk("c", `{}`, "stop"))})
	req := request()
	req.SystemPrompt = "sys"
	req.ThinkingLevel = "medium" // the model does not reason: no effort is sent
	if _, err := provider(t, srv.URL).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Last(t)
	if got.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", got.Path)
	}
	if h := got.Header.Get("Authorization"); h != "" {
		t.Errorf("no key is configured, yet Authorization = %q", h)
	}
	want := `{"max_tokens":1024,"messages":[{"content":"sys","role":"system"},{"content":"hi","role":"user"}],"model":"qwen3:8b","stream":true,"stream_options":{"include_usage":true}}`
	if g := ssetest.JSON(got.Body); g != want {
		t.Errorf("request body:\n got %s\nwant %s", g, want)
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []Config{{BaseURL: "http://x"}, {Name: "x", BaseURL: "localhost:11434"}, {Name: "x", BaseURL: "ftp://x"}} {
		_, err := New(c)
		if err == nil {
			t.Errorf("New(%+v) accepted a bad config", c)
			continue
		}
		if c.Name != "" && !strings.Contains(err.Error(), c.BaseURL) {
			t.Errorf("error %q does not name the base URL", err)
		}
	}
}
