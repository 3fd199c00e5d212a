package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/ssetest"
)

func respProvider(t testing.TB, url string) llm.Provider {
	p, err := NewResponses(Config{APIKey: fakeKey, BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Transcript pieces, as OpenAI documents the Responses streaming events.
const (
	created       = `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1741290958,"status":"in_progress","model":"gpt-5","output":[],"usage":null}}`
	inProgress    = `{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","created_at":1741290958,"status":"in_progress","model":"gpt-5","output":[],"usage":null}}`
	reasoningAdd  = `{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`
	reasoningDone = `{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAAABoEncrypted==","summary":[{"type":"summary_text","text":"**Plan**"},{"type":"summary_text","text":"Answer."}]}`
	msgAdd        = `{"type":"response.output_item.added","sequence_number":8,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`
	partAdd       = `{"type":"response.content_part.added","sequence_number":9,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`
	respUsage     = `{"input_tokens":100,"input_tokens_details":{"cached_tokens":20},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":30},"total_tokens":150}`
)

func completed(status string, extra string) string {
	return `{"type":"response.completed","sequence_number":20,"response":{"id":"resp_1","object":"response","created_at":1741290958,"status":"` + status + `","model":"gpt-5","output":[],` + extra + `"usage":` + respUsage + `}}`
}

func outText(out int, s string) string {
	return `{"type":"response.output_text.delta","sequence_number":10,"item_id":"msg_1","output_index":` + itoa(out) + `,"content_index":0,"delta":` + ssetest.JSON(s) + `,"logprobs":[]}`
}

// mtext is a text block of message item msg_1.
func mtext(s string) events.Block {
	return events.Block{Type: events.BlockText, Text: s, TextSignature: "msg_1"}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func respCases(t testing.TB) []ssetest.Case {
	m := lookup(t, "gpt-5")
	r := answers{APIResponses, m, "resp_1"}
	msg, failed := r.msg, r.failed
	full := priced(m, 80, 50, 20, 150)
	none := priced(m, 0, 0, 0, 0)
	sse := ssetest.SSE
	return append(statusCases(failed), []ssetest.Case{
		{
			Name: "text",
			Reply: ssetest.Reply{Body: sse("response.created", created, "response.in_progress", inProgress, "response.output_item.added", msgAdd,
				"response.content_part.added", partAdd, "response.output_text.delta", outText(1, "Hello"), "response.output_text.delta", outText(1, " world"),
				"response.output_text.done", `{"type":"response.output_text.done","sequence_number":12,"item_id":"msg_1","output_index":1,"content_index":0,"text":"Hello world"}`,
				"response.completed", completed("completed", ""))},
			Deltas: []events.Delta{text(0, "Hello"), text(0, " world")},
			Msg:    msg(events.StopEnd, full, "", mtext("Hello world")),
		},
		{
			Name: "reasoning summary then text",
			Reply: ssetest.Reply{Body: sse("response.created", created, "response.output_item.added", reasoningAdd,
				"response.reasoning_summary_part.added", `{"type":"response.reasoning_summary_part.added","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`,
				"response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Plan**"}`,
				"response.reasoning_summary_part.added", `{"type":"response.reasoning_summary_part.added","sequence_number":5,"item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}`,
				"response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","sequence_number":6,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Answer."}`,
				"response.output_item.done", `{"type":"response.output_item.done","sequence_number":7,"output_index":0,"item":`+reasoningDone+`}`,
				"response.output_item.added", msgAdd, "response.content_part.added", partAdd, "response.output_text.delta", outText(1, "42"),
				"response.completed", completed("completed", ""))},
			Deltas: []events.Delta{think(0, "**Plan**"), think(0, "\n\n"), think(0, "Answer."), text(1, "42")},
			Msg: msg(events.StopEnd, full, "",
				events.Block{Type: events.BlockThinking, Thinking: "**Plan**\n\nAnswer.", ThinkingSignature: reasoningDone},
				mtext("42")),
		},
		{
			Name: "several tool calls with interleaved argument deltas",
			Reply: ssetest.Reply{Body: sse("response.created", created,
				"response.output_item.added", `{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_A","name":"read"}}`,
				"response.output_item.added", `{"type":"response.output_item.added","sequence_number":3,"output_index":1,"item":{"id":"fc_2","type":"function_call","status":"in_progress","arguments":"","call_id":"call_B","name":"ls"}}`,
				"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","sequence_number":4,"item_id":"fc_1","output_index":0,"delta":"{\"path\":"}`,
				"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","sequence_number":5,"item_id":"fc_2","output_index":1,"delta":"{\"path\":\".\"}"}`,
				"response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","sequence_number":6,"item_id":"fc_1","output_index":0,"delta":"\"a.go\"}"}`,
				"response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","sequence_number":7,"item_id":"fc_1","output_index":0,"arguments":"{\"path\":\"a.go\"}"}`,
				"response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","sequence_number":8,"item_id":"fc_2","output_index":1,"arguments":"{\"path\":\".\"}"}`,
				"response.completed", completed("completed", ""))},
			Deltas: []events.Delta{args(0, "call_A|fc_1", "read", `{"path":`), args(1, "call_B|fc_2", "ls", `{"path":"."}`), args(0, "call_A|fc_1", "read", `"a.go"}`)},
			Msg:    msg(events.StopToolUse, full, "", call("call_A|fc_1", "read", `{"path":"a.go"}`), call("call_B|fc_2", "ls", `{"path":"."}`)),
		},
		{
			Name: "incomplete: max output tokens",
			Reply: ssetest.Reply{Body: sse("response.created", created, "response.output_item.added", msgAdd, "response.output_text.delta", outText(1, "Once"),
				"response.incomplete", `{"type":"response.incomplete","sequence_number":20,"response":{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-5","output":[],"usage":`+respUsage+`}}`)},
			Deltas: []events.Delta{text(0, "Once")},
			Msg:    msg(events.StopLength, full, "", mtext("Once")),
		},
		{
			Name: "error event mid-stream",
			Reply: ssetest.Reply{Body: sse("response.created", created, "response.output_item.added", msgAdd, "response.output_text.delta", outText(1, "Par"),
				"error", `{"type":"error","sequence_number":11,"code":"server_error","message":"The server had an error while processing your request.","param":null}`)},
			Deltas: []events.Delta{text(0, "Par")},
			Msg:    msg(events.StopError, none, "retryable (status 500): The server had an error while processing your request.", mtext("Par")),
			Err:    true, Kind: llm.KindRetryable, Status: 500,
		},
		{
			Name: "response.failed mid-stream",
			Reply: ssetest.Reply{Body: sse("response.created", created, "response.output_item.added", msgAdd, "response.output_text.delta", outText(1, "Par"),
				"response.failed", `{"type":"response.failed","sequence_number":12,"response":{"id":"resp_1","object":"response","status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached for gpt-5."},"model":"gpt-5","output":[],"usage":null}}`)},
			Deltas: []events.Delta{text(0, "Par")},
			Msg:    msg(events.StopError, none, "retryable (status 429): Rate limit reached for gpt-5.", mtext("Par")),
			Err:    true, Kind: llm.KindRetryable, Status: 429,
		},
		{
			Name:  "429 with retry-after",
			Reply: ssetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: `{"error":{"message":"Rate limit reached for gpt-5 on requests per min (RPM): Limit 500.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
			Msg:   failed("retryable (status 429): Rate limit reached for gpt-5 on requests per min (RPM): Limit 500."),
			Err:   true, Kind: llm.KindRetryable, Status: 429, RetryAfter: 3e9,
		},
		{
			Name:  "overflow: exceeds the context window",
			Reply: ssetest.Reply{Status: 400, Body: `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`},
			Msg:   failed("context_overflow (status 400): Your input exceeds the context window of this model. Please adjust your input and try again."),
			Err:   true, Kind: llm.KindContextOverflow, Status: 400,
		},
		{
			Name: "silent overflow: a success whose usage exceeds the window stays a success",
			Reply: ssetest.Reply{Body: sse("response.created", created, "response.output_item.added", msgAdd, "response.output_text.delta", outText(1, "ok"),
				"response.completed", `{"type":"response.completed","sequence_number":20,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[],"usage":{"input_tokens":410000,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"total_tokens":410002}}}`)},
			Deltas: []events.Delta{text(0, "ok")},
			Msg:    msg(events.StopEnd, priced(m, 410000, 2, 0, 410002), "", mtext("ok")),
		},
		{
			Name: "malformed SSE line",
			Reply: ssetest.Reply{Body: sse("response.created", created, "response.output_item.added", msgAdd, "response.output_text.delta", outText(1, "Hel"),
				"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"delta":"lo`)},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    msg(events.StopError, none, `retryable: responses stream: malformed event: invalid character '\n' in string literal`, mtext("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
		{
			Name:   "connection cut mid-stream",
			Reply:  ssetest.Reply{Cut: true, Body: sse("response.created", created, "response.output_item.added", msgAdd, "response.output_text.delta", outText(1, "Hel"))},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    msg(events.StopError, none, "retryable: responses stream: unexpected EOF", mtext("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
		{
			Name:   "stream ends before response.completed",
			Reply:  ssetest.Reply{Body: sse("response.created", created, "response.output_item.added", msgAdd, "response.output_text.delta", outText(1, "Hel"))},
			Deltas: []events.Delta{text(0, "Hel")},
			Msg:    msg(events.StopError, none, "retryable: the stream ended before response.completed", mtext("Hel")),
			Err:    true, Kind: llm.KindRetryable,
		},
	}...)
}

func TestResponsesStream(t *testing.T) {
	ssetest.Run(t, respCases(t), userHi(t, "gpt-5"), respProvider)
}

func TestResponsesAbortMidStream(t *testing.T) {
	deltas, msg, _ := ssetest.RunAbort(t, ssetest.SSE("response.created", created, "response.output_item.added", msgAdd, "response.output_text.delta", outText(1, "Hel")),
		userHi(t, "gpt-5")(), respProvider)
	ssetest.AssertDeltas(t, deltas, []events.Delta{text(0, "Hel")})
	ssetest.AssertMessage(t, msg, answers{APIResponses, lookup(t, "gpt-5"), "resp_1"}.aborted(mtext("Hel")))
}

func TestResponsesRequestShape(t *testing.T) {
	srv := ssetest.Serve(t, ssetest.Reply{Body: ssetest.SSE("response.completed", completed("completed", ""))})
	m := lookup(t, "gpt-5")
	req := &llm.Request{Model: m, SystemPrompt: "sys", ThinkingLevel: "low", MaxTokens: 2000,
		Tools: []events.ToolSpec{{Name: "ls", Description: "list", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Messages: []events.Message{
			{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{mtext("look"), {Type: events.BlockImage, MimeType: "image/jpeg", Data: "/9j/4AAQ"}}}},
			{Role: events.RoleAssistant, API: APIResponses, Provider: "openai", Model: "gpt-5", Content: events.Content{Blocks: []events.Block{
				{Type: events.BlockThinking, Thinking: "**Plan**", ThinkingSignature: reasoningDone}, mtext("ok"), call("call_1|fc_1", "ls", `{"path":"."}`)}}},
			{Role: events.RoleToolResult, ToolCallID: "call_1|fc_1", ToolName: "ls", Content: events.TextContent("a.go")},
			{Role: events.RoleAssistant, API: APIChat, Provider: "openai", Model: "gpt-4o", Content: events.Content{Blocks: []events.Block{
				{Type: events.BlockThinking, Thinking: "other model", ThinkingSignature: "x"}, events.TextBlock("from chat")}}},
		}}
	if _, err := respProvider(t, srv.URL).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	want := `{"include":["reasoning.encrypted_content"],"input":[` +
		`{"content":[{"text":"look","type":"input_text"},{"detail":"auto","image_url":"data:image/jpeg;base64,/9j/4AAQ","type":"input_image"}],"role":"user"},` +
		`{"encrypted_content":"gAAAAABoEncrypted==","id":"rs_1","summary":[{"text":"**Plan**","type":"summary_text"},{"text":"Answer.","type":"summary_text"}],"type":"reasoning"},` +
		`{"content":[{"annotations":[],"text":"ok","type":"output_text"}],"id":"msg_1","role":"assistant","status":"completed","type":"message"},` +
		`{"arguments":"{\"path\":\".\"}","call_id":"call_1","id":"fc_1","name":"ls","type":"function_call"},` +
		`{"call_id":"call_1","output":"a.go","type":"function_call_output"},` +
		`{"content":"from chat","role":"assistant"}],` +
		`"instructions":"sys","max_output_tokens":2000,"model":"gpt-5","reasoning":{"effort":"low","summary":"auto"},"store":false,"stream":true,` +
		`"tools":[{"description":"list","name":"ls","parameters":{"properties":{"path":{"type":"string"}},"type":"object"},"strict":false,"type":"function"}]}`
	assertSent(t, srv, "/responses", want)
}
