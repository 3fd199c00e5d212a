package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/ssetest"
	"github.com/cairn-agents/cairn/pkg/provider/models"
)

const fakeKey = "sk-ant-test-0000-FAKE-KEY-do-not-leak"

func model(t testing.TB) llm.Model {
	t.Helper()
	m, err := models.Builtin().Lookup("anthropic", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newProvider(t testing.TB, url string) llm.Provider {
	t.Helper()
	p, err := New(Config{APIKey: fakeKey, BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request(t testing.TB) *llm.Request {
	return &llm.Request{Model: model(t), SystemPrompt: "be brief",
		Messages: []events.Message{{Role: events.RoleUser, Content: events.TextContent("hi")}}}
}

func usage(t testing.TB, in, out, cr, cw int64) *events.Usage {
	u := events.Usage{Input: in, Output: out, CacheRead: cr, CacheWrite: cw}
	model(t).Cost(&u)
	return &u
}

func assistant(t testing.TB, stop events.StopReason, u *events.Usage, errMsg string, blocks ...events.Block) events.Message {
	if blocks == nil {
		blocks = []events.Block{}
	}
	return events.Message{Role: events.RoleAssistant, Content: events.Content{Blocks: blocks},
		API: API, Provider: "anthropic", Model: "claude-sonnet-4-5", ResponseID: "msg_01",
		Usage: u, StopReason: stop, ErrorMessage: errMsg}
}

// The deltas and blocks the cases expect.
var text, think, args = ssetest.Text, ssetest.Think, ssetest.Args

// Transcript pieces, as Anthropic documents its streaming events.
const (
	start     = `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}`
	textStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	ping      = `{"type": "ping"}`
	stop0     = `{"type":"content_block_stop","index":0}`
	msgStop   = `{"type":"message_stop"}`
)

func textDelta(i int, s string) string {
	return `{"type":"content_block_delta","index":` + itoa(i) + `,"delta":{"type":"text_delta","text":` + ssetest.JSON(s) + `}}`
}

func msgDelta(reason string, out int) string {
	return `{"type":"message_delta","delta":{"stop_reason":"` + reason + `","stop_sequence":null},"usage":{"output_tokens":` + itoa(out) + `}}`
}

func cases(t testing.TB) []ssetest.Case {
	return []ssetest.Case{
		{
			Name: "text",
			Reply: ssetest.Reply{Body: ssetest.SSE(
				"message_start", start, "content_block_start", textStart, "ping", ping,
				"content_block_delta", textDelta(0, "Hello"), "content_block_delta", textDelta(0, " world"),
				"content_block_stop", stop0, "message_delta", msgDelta("end_turn", 15), "message_stop", msgStop)},
			Deltas: []events.Delta{text(0, "Hello"), text(0, " world")},
			Msg:    assistant(t, events.StopEnd, usage(t, 25, 15, 100, 10), "", events.TextBlock("Hello world")),
		},
		{
			Name: "thinking then text",
			Reply: ssetest.Reply{Body: ssetest.SSE(
				"message_start", start,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" carefully."}}`,
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}`,
				"content_block_stop", stop0,
				"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":1}`,
				"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
				"content_block_delta", textDelta(2, "42"),
				"content_block_stop", `{"type":"content_block_stop","index":2}`,
				"message_delta", msgDelta("end_turn", 80), "message_stop", msgStop)},
			Deltas: []events.Delta{think(0, "Let me think"), think(0, " carefully."), text(2, "42")},
			Msg: assistant(t, events.StopEnd, usage(t, 25, 80, 100, 10), "",
				events.Block{Type: events.BlockThinking, Thinking: "Let me think carefully.", ThinkingSignature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
				events.Block{Type: events.BlockThinking, Redacted: true, ThinkingSignature: "EmwKAhgBEgy3va3pzix"},
				events.TextBlock("42")),
		},
		{
			Name: "several tool calls with interleaved argument deltas",
			Reply: ssetest.Reply{Body: ssetest.SSE(
				"message_start", start, "content_block_start", textStart,
				"content_block_delta", textDelta(0, "Checking both."), "content_block_stop", stop0,
				"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"read","input":{}}}`,
				"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01B","name":"ls","input":{}}}`,
				"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
				"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a"}}`,
				"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}`,
				"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":".go\"}"}}`,
				"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":" \".\"}"}}`,
				"content_block_stop", `{"type":"content_block_stop","index":1}`,
				"content_block_stop", `{"type":"content_block_stop","index":2}`,
				"message_delta", msgDelta("tool_use", 60), "message_stop", msgStop)},
			Deltas: []events.Delta{text(0, "Checking both."),
				args(1, "toolu_01A", "read", `{"path": "a`), args(2, "toolu_01B", "ls", `{"path":`),
				args(1, "toolu_01A", "read", `.go"}`), args(2, "toolu_01B", "ls", ` "."}`)},
			Msg: assistant(t, events.StopToolUse, usage(t, 25, 60, 100, 10), "", events.TextBlock("Checking both."),
				events.Block{Type: events.BlockToolCall, ID: "toolu_01A", Name: "read", Arguments: json.RawMessage(`{"path": "a.go"}`)},
				events.Block{Type: events.BlockToolCall, ID: "toolu_01B", Name: "ls", Arguments: json.RawMessage(`{"path": "."}`)}),
		},
		{
			Name: "tool input sent whole in content_block_start (gateways)",
			Reply: ssetest.Reply{Body: ssetest.SSE(
				"message_start", start,
				"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01C","name":"ls","input":{"path":"."}}}`,
				"content_block_stop", stop0,
				"message_delta", msgDelta("tool_use", 9), "message_stop", msgStop)},
			Deltas: []events.Delta{args(0, "toolu_01C", "ls", `{"path":"."}`)},
			Msg: assistant(t, events.StopToolUse, usage(t, 25, 9, 100, 10), "",
				events.Block{Type: events.BlockToolCall, ID: "toolu_01C", Name: "ls", Arguments: json.RawMessage(`{"path":"."}`)}),
		},
		{
			Name: "max tokens",
			Reply: ssetest.Reply{Body: ssetest.SSE("message_start", start, "content_block_start", textStart,
				"content_block_delta", textDelta(0, "Once upon"), "message_delta", msgDelta("max_tokens", 4096), "message_stop", msgStop)},
			Deltas: []events.Delta{text(0, "Once upon")},
			Msg:    assistant(t, events.StopLength, usage(t, 25, 4096, 100, 10), "", events.TextBlock("Once upon")),
		},
		{
			Name:  "refusal",
			Reply: ssetest.Reply{Body: ssetest.SSE("message_start", start, "message_delta", msgDelta("refusal", 3), "message_stop", msgStop)},
			Msg:   assistant(t, events.StopError, usage(t, 25, 1, 100, 10), "other: the model declined to answer (stop reason refusal)"),
			Err:   true, Kind: llm.KindOther,
		},
		{
			Name: "error event mid-stream",
			Reply: ssetest.Reply{Body: ssetest.SSE("message_start", start, "content_block_start", textStart,
				"content_block_delta", textDelta(0, "Par"),
				"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)},
			Deltas: []events.Delta{text(0, "Par")},
			Msg:    assistant(t, events.StopError, usage(t, 25, 1, 100, 10), "retryable (status 529): Overloaded", events.TextBlock("Par")),
			Err:    true, Kind: llm.KindRetryable, Status: 529,
		},
		{
			Name: "429 with retry-after",
			Reply: ssetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "7", "request-id": "req_1"},
				Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
			Msg: failed(t, "retryable (status 429): Number of request tokens has exceeded your per-minute rate limit"),
			Err: true, Kind: llm.KindRetryable, Status: 429, RetryAfter: 7 * time.Second,
		},
		statusCase(t, "529 overloaded", 529, "overloaded_error", "Overloaded", llm.KindRetryable, "retryable (status 529): Overloaded"),
		statusCase(t, "500", 500, "api_error", "Internal server error", llm.KindRetryable, "retryable (status 500): Internal server error"),
		statusCase(t, "401", 401, "authentication_error", "invalid x-api-key", llm.KindAuth, "auth (status 401): invalid x-api-key"),
		statusCase(t, "400 invalid request", 400, "invalid_request_error", "messages: roles must alternate", llm.KindInvalidRequest, "invalid_request (status 400): messages: roles must alternate"),
		statusCase(t, "overflow: prompt is too long", 400, "invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum", llm.KindContextOverflow, "context_overflow (status 400): prompt is too long: 213462 tokens > 200000 maximum"),
		statusCase(t, "overflow: 413 request too large", 413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", llm.KindContextOverflow, "context_overflow (status 413): Request exceeds the maximum allowed number of bytes."),
		{
			Name: "silent overflow: a success whose usage exceeds the window stays a success",
			Reply: ssetest.Reply{Body: ssetest.SSE(
				"message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":150000,"cache_creation_input_tokens":0,"cache_read_input_tokens":60000,"output_tokens":1}}}`,
				"content_block_start", textStart, "content_block_delta", textDelta(0, "ok"),
				"message_delta", msgDelta("end_turn", 2), "message_stop", msgStop)},
			Deltas: []events.Delta{text(0, "ok")},
			Msg:    assistant(t, events.StopEnd, usage(t, 150000, 2, 60000, 0), "", events.TextBlock("ok")),
		},
		{
			Name: "malformed SSE line",
			Reply: ssetest.Reply{Body: ssetest.SSE("message_start", start, "content_block_start", textStart,
				"content_block_delta", textDelta(0, "Hel"),
				"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo`,
				"message_stop", msgStop)},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    assistant(t, events.StopError, usage(t, 25, 1, 100, 10), `retryable: anthropic stream: malformed event: invalid character '\n' in string literal`, events.TextBlock("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
		{
			Name: "connection cut mid-stream",
			Reply: ssetest.Reply{Cut: true, Body: ssetest.SSE("message_start", start, "content_block_start", textStart,
				"content_block_delta", textDelta(0, "Hel"))},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    assistant(t, events.StopError, usage(t, 25, 1, 100, 10), "retryable: anthropic stream: unexpected EOF", events.TextBlock("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
		{
			Name: "stream ends before message_stop",
			Reply: ssetest.Reply{Body: ssetest.SSE("message_start", start, "content_block_start", textStart,
				"content_block_delta", textDelta(0, "Hel"))},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    assistant(t, events.StopError, usage(t, 25, 1, 100, 10), "retryable: the stream ended before message_stop", events.TextBlock("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
	}
}

// statusCase is a request refused with HTTP status before the stream began,
// with an error of type typ and message msg, which the provider reports as
// errMsg, an error of kind.
func statusCase(t testing.TB, name string, status int, typ, msg string, kind llm.Kind, errMsg string) ssetest.Case {
	return ssetest.Case{Name: name, Reply: ssetest.Reply{Status: status, Body: `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`},
		Msg: failed(t, errMsg), Err: true, Kind: kind, Status: status}
}

// failed is the message of a request that failed before the stream began.
func failed(t testing.TB, errMsg string) events.Message {
	m := assistant(t, events.StopError, usage(t, 0, 0, 0, 0), errMsg)
	m.ResponseID = ""
	return m
}

func TestStream(t *testing.T) {
	ssetest.Run(t, cases(t), func() *llm.Request { return request(t) }, newProvider)
}

func TestAbortMidStream(t *testing.T) {
	deltas, msg, _ := ssetest.RunAbort(t, ssetest.SSE("message_start", start,
		"content_block_start", textStart, "content_block_delta", textDelta(0, "Hel")), request(t), newProvider)
	ssetest.AssertDeltas(t, deltas, []events.Delta{text(0, "Hel")})
	ssetest.AssertMessage(t, msg, assistant(t, events.StopAborted, usage(t, 25, 1, 100, 10), "aborted: the request was aborted", events.TextBlock("Hel")))
}

func TestNoKeyIsAnAuthError(t *testing.T) {
	_, err := New(Config{})
	if !errors.Is(err, llm.ErrAuth) {
		t.Fatalf("err = %v, want auth", err)
	}
}

func TestRequestShape(t *testing.T) {
	srv := ssetest.Serve(t, ssetest.Reply{Body: ssetest.SSE("message_start", start, "message_delta", msgDelta("end_turn", 1), "message_stop", msgStop)})
	m := model(t)
	req := &llm.Request{
		Model: m, SystemPrompt: "sys", ThinkingLevel: "medium", MaxTokens: 1000,
		Tools: []events.ToolSpec{{Name: "read", Description: "read a file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}},
		Messages: []events.Message{
			{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{events.TextBlock("look"), {Type: events.BlockImage, MimeType: "image/png", Data: "iVBORw0KGgo="}}}},
			{Role: events.RoleAssistant, API: API, Provider: "anthropic", Model: m.ID, StopReason: events.StopToolUse, Content: events.Content{Blocks: []events.Block{
				{Type: events.BlockThinking, Thinking: "hmm", ThinkingSignature: "sig1"},
				{Type: events.BlockToolCall, ID: "toolu_1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
				{Type: events.BlockToolCall, ID: "toolu_2", Name: "read", Arguments: json.RawMessage(`{"path":"b"}`)}}}},
			{Role: events.RoleToolResult, ToolCallID: "toolu_1", ToolName: "read", Content: events.TextContent("A")},
			{Role: events.RoleToolResult, ToolCallID: "toolu_2", ToolName: "read", IsError: true, Content: events.TextContent("no such file")},
		},
		Options: map[string]json.RawMessage{"metadata": json.RawMessage(`{"user_id":"u1"}`)},
	}
	if _, err := newProvider(t, srv.URL).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Last(t)
	if got.Path != "/v1/messages" {
		t.Errorf("path = %s", got.Path)
	}
	if h := got.Header.Get("Authorization") + got.Header.Get("X-Api-Key"); h != "Bearer "+fakeKey && h != fakeKey {
		t.Errorf("the key was not sent: %v", got.Header)
	}
	want := `{"max_tokens":11240,"messages":[` +
		`{"content":[{"text":"look","type":"text"},{"source":{"data":"iVBORw0KGgo=","media_type":"image/png","type":"base64"},"type":"image"}],"role":"user"},` +
		`{"content":[{"signature":"sig1","thinking":"hmm","type":"thinking"},{"id":"toolu_1","input":{"path":"a"},"name":"read","type":"tool_use"},{"id":"toolu_2","input":{"path":"b"},"name":"read","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":[{"text":"A","type":"text"}],"tool_use_id":"toolu_1","type":"tool_result"},{"cache_control":{"type":"ephemeral"},"content":[{"text":"no such file","type":"text"}],"is_error":true,"tool_use_id":"toolu_2","type":"tool_result"}],"role":"user"}],` +
		`"metadata":{"user_id":"u1"},"model":"claude-sonnet-4-5","stream":true,` +
		`"system":[{"cache_control":{"type":"ephemeral"},"text":"sys","type":"text"}],` +
		`"thinking":{"budget_tokens":10240,"type":"enabled"},` +
		`"tools":[{"description":"read a file","input_schema":{"additionalProperties":false,"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"},"name":"read"}]}`
	if g := ssetest.JSON(got.Body); g != want {
		t.Errorf("request body:\n got %s\nwant %s", g, want)
	}
}
