package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/ssetest"
	"github.com/cairn-agents/cairn/pkg/provider/models"
)

const fakeKey = "sk-proj-FAKE-openai-key-0000-do-not-leak"

func lookup(t testing.TB, id string) llm.Model {
	t.Helper()
	m, err := models.Builtin().Lookup("openai", id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func chatProvider(t testing.TB, url string) llm.Provider {
	p, err := NewChat(Config{APIKey: fakeKey, BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func priced(m llm.Model, in, out, cached, total int64) *events.Usage {
	u := events.Usage{Input: in, Output: out, CacheRead: cached, TotalTokens: total}
	m.Cost(&u)
	return &u
}

// The deltas and blocks the cases expect.
var text, think, args, call = ssetest.Text, ssetest.Think, ssetest.Args, ssetest.Call

// answers builds the final messages of api for model, with response id.
type answers struct {
	api string
	m   llm.Model
	id  string
}

func (a answers) msg(stop events.StopReason, u *events.Usage, errMsg string, blocks ...events.Block) events.Message {
	if blocks == nil {
		blocks = []events.Block{}
	}
	return events.Message{Role: events.RoleAssistant, Content: events.Content{Blocks: blocks}, API: a.api,
		Provider: "openai", Model: a.m.ID, ResponseID: a.id, Usage: u, StopReason: stop, ErrorMessage: errMsg}
}

// failed is the message of a request that failed before the stream began.
func (a answers) failed(errMsg string) events.Message {
	x := a.msg(events.StopError, priced(a.m, 0, 0, 0, 0), errMsg)
	x.ResponseID = ""
	return x
}

// aborted is the message of a stream aborted after blocks.
func (a answers) aborted(blocks ...events.Block) events.Message {
	return a.msg(events.StopAborted, priced(a.m, 0, 0, 0, 0), "aborted: the request was aborted", blocks...)
}

// userHi is a request to model id with one user message.
func userHi(t testing.TB, id string) func() *llm.Request {
	return func() *llm.Request {
		return &llm.Request{Model: lookup(t, id), SystemPrompt: "be brief",
			Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent("hi")}}}
	}
}

// assertSent checks the last request srv received: its path, the key and
// the body (as canonical JSON).
func assertSent(t *testing.T, srv *ssetest.Server, path, body string) {
	t.Helper()
	got := srv.Last(t)
	if got.Path != path || got.Header.Get("Authorization") != "Bearer "+fakeKey {
		t.Errorf("path %s, authorization %q", got.Path, got.Header.Get("Authorization"))
	}
	if g := ssetest.JSON(got.Body); g != body {
		t.Errorf("request body:\n got %s\nwant %s", g, body)
	}
}

func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}]}`
}

const (
	roleChunk  = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`
	usageChunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52,"prompt_tokens_details":{"cached_tokens":8,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`
)

func content(s string) string { return `{"content":` + ssetest.JSON(s) + `}` }

// statusCases are the error statuses both APIs answer alike, before a
// stream begins.
func statusCases(failed func(errMsg string) events.Message) []ssetest.Case {
	return []ssetest.Case{
		{
			Name:  "529 overloaded",
			Reply: ssetest.Reply{Status: 529, Body: `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`},
			Msg:   failed("retryable (status 529): The engine is currently overloaded, please try again later"),
			Err:   true, Kind: llm.KindRetryable, Status: 529,
		},
		{
			Name:  "500",
			Reply: ssetest.Reply{Status: 500, Body: `{"error":{"message":"The server had an error processing your request.","type":"server_error","param":null,"code":null}}`},
			Msg:   failed("retryable (status 500): The server had an error processing your request."),
			Err:   true, Kind: llm.KindRetryable, Status: 500,
		},
	}
}

func chatCases(t testing.TB) []ssetest.Case {
	m := lookup(t, "gpt-4o")
	r := answers{APIChat, m, "chatcmpl-1"}
	msg, failed := r.msg, r.failed
	full := priced(m, 32, 12, 8, 52)
	none := priced(m, 0, 0, 0, 0)
	return append(statusCases(failed), []ssetest.Case{
		{
			Name:   "text",
			Reply:  ssetest.Reply{Body: ssetest.Data(roleChunk, chunk(content("Hello"), ""), chunk(content(" world"), ""), chunk(`{}`, "stop"), usageChunk, "[DONE]")},
			Deltas: []events.Delta{text(0, "Hello"), text(0, " world")},
			Msg:    msg(events.StopEnd, full, "", events.TextBlock("Hello world")),
		},
		{
			Name: "several tool calls with interleaved argument deltas",
			Reply: ssetest.Reply{Body: ssetest.Data(roleChunk, chunk(content("Let me look."), ""),
				chunk(`{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
				chunk(`{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"ls","arguments":""}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":\".\"}"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a.go\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"), usageChunk, "[DONE]")},
			Deltas: []events.Delta{text(0, "Let me look."), args(1, "call_A", "read", `{"path":`), args(2, "call_B", "ls", `{"path":"."}`), args(1, "call_A", "read", `"a.go"}`)},
			Msg:    msg(events.StopToolUse, full, "", events.TextBlock("Let me look."), call("call_A", "read", `{"path":"a.go"}`), call("call_B", "ls", `{"path":"."}`)),
		},
		{
			Name:   "refusal streamed as text",
			Reply:  ssetest.Reply{Body: ssetest.Data(roleChunk, chunk(`{"refusal":"I can't help with that."}`, ""), chunk(`{}`, "stop"), usageChunk, "[DONE]")},
			Deltas: []events.Delta{text(0, "I can't help with that.")},
			Msg:    msg(events.StopEnd, full, "", events.TextBlock("I can't help with that.")),
		},
		{
			Name:   "length",
			Reply:  ssetest.Reply{Body: ssetest.Data(roleChunk, chunk(content("Once"), ""), chunk(`{}`, "length"), usageChunk, "[DONE]")},
			Deltas: []events.Delta{text(0, "Once")},
			Msg:    msg(events.StopLength, full, "", events.TextBlock("Once")),
		},
		{
			Name: "error event mid-stream",
			Reply: ssetest.Reply{Body: ssetest.Data(roleChunk, chunk(content("Par"), ""),
				`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`)},
			Deltas: []events.Delta{text(0, "Par")},
			Msg:    msg(events.StopError, none, "retryable (status 500): The server had an error while processing your request. Sorry about that!", events.TextBlock("Par")),
			Err:    true, Kind: llm.KindRetryable, Status: 500,
		},
		{
			Name: "429 with retry-after",
			Reply: ssetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "2", "retry-after-ms": "1500"},
				Body: `{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 500.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`},
			Msg: failed("retryable (status 429): Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 500."),
			Err: true, Kind: llm.KindRetryable, Status: 429, RetryAfter: 1500 * 1e6,
		},
		{
			Name:  "401",
			Reply: ssetest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: sk-proj-****leak.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
			Msg:   failed("auth (status 401): Incorrect API key provided: sk-proj-****leak."),
			Err:   true, Kind: llm.KindAuth, Status: 401,
		},
		{
			Name:  "overflow: context_length_exceeded",
			Reply: ssetest.Reply{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
			Msg:   failed("context_overflow (status 400): This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages."),
			Err:   true, Kind: llm.KindContextOverflow, Status: 400,
		},
		{
			Name:  "400 invalid request",
			Reply: ssetest.Reply{Status: 400, Body: `{"error":{"message":"Invalid value for 'tool_choice'.","type":"invalid_request_error","param":"tool_choice","code":"invalid_value"}}`},
			Msg:   failed("invalid_request (status 400): Invalid value for 'tool_choice'."),
			Err:   true, Kind: llm.KindInvalidRequest, Status: 400,
		},
		{
			Name: "silent overflow: a success whose usage exceeds the window stays a success",
			Reply: ssetest.Reply{Body: ssetest.Data(roleChunk, chunk(content("ok"), ""), chunk(`{}`, "stop"),
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":130000,"completion_tokens":2,"total_tokens":130002}}`, "[DONE]")},
			Deltas: []events.Delta{text(0, "ok")},
			Msg:    msg(events.StopEnd, priced(m, 130000, 2, 0, 130002), "", events.TextBlock("ok")),
		},
		{
			Name: "malformed SSE line",
			Reply: ssetest.Reply{Body: ssetest.Data(roleChunk, chunk(content("Hel"), ""),
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"lo`, "[DONE]")},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    msg(events.StopError, none, `retryable: chat completions stream: malformed event: invalid character '\n' in string literal`, events.TextBlock("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
		{
			Name:   "connection cut mid-stream",
			Reply:  ssetest.Reply{Cut: true, Body: ssetest.Data(roleChunk, chunk(content("Hel"), ""))},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    msg(events.StopError, none, "retryable: chat completions stream: unexpected EOF", events.TextBlock("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
	}...)
}

func TestChatStream(t *testing.T) {
	ssetest.Run(t, chatCases(t), userHi(t, "gpt-4o"), chatProvider)
}

func TestChatAbortMidStream(t *testing.T) {
	deltas, msg, _ := ssetest.RunAbort(t, ssetest.Data(roleChunk, chunk(content("Hel"), "")), userHi(t, "gpt-4o")(), chatProvider)
	ssetest.AssertDeltas(t, deltas, []events.Delta{text(0, "Hel")})
	ssetest.AssertMessage(t, msg, answers{APIChat, lookup(t, "gpt-4o"), "chatcmpl-1"}.aborted(events.TextBlock("Hel")))
}

func TestChatRequestShape(t *testing.T) {
	srv := ssetest.Serve(t, ssetest.Reply{Body: ssetest.Data(chunk(`{}`, "stop"), "[DONE]")})
	m := lookup(t, "o4-mini")
	temp := 0.5
	req := &llm.Request{Model: m, SystemPrompt: "sys", ThinkingLevel: "high", Temperature: &temp,
		Tools: []events.ToolSpec{{Name: "ls", Description: "list", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Messages: []events.Message{
			{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{events.TextBlock("look"), {Type: events.BlockImage, MimeType: "image/png", Data: "iVBORw0KGgo="}}}},
			{Role: events.RoleAssistant, Content: events.Content{Blocks: []events.Block{{Type: events.BlockThinking, Thinking: "hmm"}, events.TextBlock("ok"), call("call_1|fc_1", "ls", `{"path":"."}`)}}},
			{Role: events.RoleToolResult, ToolCallID: "call_1|fc_1", ToolName: "ls", Content: events.TextContent("a.go")},
		}}
	if _, err := chatProvider(t, srv.URL).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	want := `{"max_completion_tokens":100000,"messages":[{"content":"sys","role":"developer"},` +
		`{"content":[{"text":"look","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw0KGgo="},"type":"image_url"}],"role":"user"},` +
		`{"content":"ok","role":"assistant","tool_calls":[{"function":{"arguments":"{\"path\":\".\"}","name":"ls"},"id":"call_1","type":"function"}]},` +
		`{"content":"a.go","role":"tool","tool_call_id":"call_1"}],` +
		`"model":"o4-mini","reasoning_effort":"high","stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"function":{"description":"list","name":"ls","parameters":{"properties":{"path":{"type":"string"}},"type":"object"}},"type":"function"}]}`
	assertSent(t, srv, "/chat/completions", want)
}
