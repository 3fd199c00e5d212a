package oai

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
)

// chatState folds chunks into the message. It tolerates what compatible
// servers do differently: reasoning in reasoning_content or reasoning,
// usage missing or inside the last chunk with choices, tool calls without
// ids, several calls at one index, arguments sent whole (even as a JSON
// object instead of a string), and finish reasons under other names.
type chatState struct {
	b      *stream.Builder
	calls  map[int64]int // tool-call index in the chunk -> block index
	reason string        // the last finish_reason
	n      int           // tool calls seen, for ids of calls that came without one
}

func (st *chatState) chunk(c openai.ChatCompletionChunk) {
	if c.ID != "" {
		st.b.SetResponseID(c.ID)
	}
	if c.JSON.Usage.Valid() {
		u := c.Usage
		cached := u.PromptTokensDetails.CachedTokens
		st.b.SetUsage(events.Usage{Input: u.PromptTokens - cached, Output: u.CompletionTokens,
			CacheRead: cached, CacheWrite: u.PromptTokensDetails.CacheWriteTokens, TotalTokens: u.TotalTokens})
	}
	if len(c.Choices) == 0 {
		return
	}
	ch := c.Choices[0]
	d := ch.Delta
	for _, k := range []string{"reasoning_content", "reasoning"} {
		if f, ok := d.JSON.ExtraFields[k]; ok {
			var s string
			if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
				st.b.AppendThinking(s)
				break
			}
		}
	}
	if d.Content != "" {
		st.b.AppendText(d.Content)
	}
	if d.Refusal != "" {
		st.b.AppendText(d.Refusal) // the model's refusal is its answer
	}
	for _, tc := range d.ToolCalls {
		st.toolCall(tc)
	}
	if ch.FinishReason != "" {
		st.reason = ch.FinishReason
	}
}

func (st *chatState) toolCall(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	i, ok := st.calls[tc.Index]
	switch {
	case !ok:
	case tc.ID != "" && tc.ID != st.b.Block(i).ID:
		ok = false // a new call at a reused index
	case tc.ID == "" && tc.Function.Name != "" && json.Valid(st.b.ArgsSoFar(i)):
		ok = false // a named call after a complete one, without ids
	}
	if !ok {
		st.n++
		id := tc.ID
		if id == "" {
			id = "call_" + itoa(st.n)
		}
		i = st.b.OpenToolCall(id, tc.Function.Name)
		st.calls[tc.Index] = i
	} else if tc.Function.Name != "" && st.b.Block(i).Name == "" {
		st.b.Block(i).Name = tc.Function.Name
	}
	args := tc.Function.Arguments
	if raw := strings.TrimSpace(tc.Function.JSON.Arguments.Raw()); strings.HasPrefix(raw, "{") {
		args = raw // sent as an object, not a string
	}
	st.b.ToolArgs(i, args)
}

// end maps the finish reason.
func (st *chatState) end() (events.Message, error) {
	switch st.reason {
	case "length", "max_tokens", "model_length":
		return st.b.Finish(events.StopLength)
	case "tool_calls", "function_call", "tool_use":
		return st.b.Finish(events.StopToolUse)
	case "content_filter":
		return st.b.Fail(&llm.Error{Kind: llm.KindOther, Message: "the provider's content filter stopped the response (finish_reason content_filter)"})
	case "error":
		return st.b.Fail(&llm.Error{Kind: llm.KindRetryable, Message: "the server ended the response with finish_reason error"})
	}
	// stop, and the names some servers use for it (end_turn, eos,
	// stop_sequence...). Some say stop after tool calls.
	if st.hasCalls() {
		return st.b.Finish(events.StopToolUse)
	}
	return st.b.Finish(events.StopEnd)
}

func (st *chatState) hasCalls() bool { return len(st.calls) > 0 }

func (st *chatState) finish(ctx context.Context, err error, fail *httpFailure) (events.Message, error) {
	if err != nil {
		return st.b.Fail(classify(ctx, "chat completions", err, fail))
	}
	if ctx.Err() != nil {
		return st.b.Fail(stream.Aborted(ctx))
	}
	if st.reason == "" {
		return st.b.Fail(stream.Truncated(ctx, "a finish_reason"))
	}
	return st.end()
}
