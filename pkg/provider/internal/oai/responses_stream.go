package oai

import (
	"context"

	"github.com/openai/openai-go/v3/responses"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
)

// respState folds Responses events into the message.
type respState struct {
	b     *stream.Builder
	items map[int64]int    // output_index -> block (reasoning, function call)
	texts map[[2]int64]int // (output_index, content_index) -> text block
	msgID map[int64]string // output_index -> message item id
	calls int
	args  map[int]bool // blocks whose arguments arrived as deltas
	msg   events.Message
	err   error
}

// event handles one event and reports whether it ended the stream (then
// st.msg and st.err are the result).
func (st *respState) event(ev responses.ResponseStreamEventUnion) bool {
	b := st.b
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response.ID != "" {
			b.SetResponseID(ev.Response.ID)
		}
	case "response.output_item.added":
		switch ev.Item.Type {
		case "reasoning":
			st.items[ev.OutputIndex] = b.Open(events.BlockThinking)
		case "function_call":
			st.calls++
			st.items[ev.OutputIndex] = b.OpenToolCall(joinID(ev.Item.CallID, ev.Item.ID), ev.Item.Name)
		case "message":
			if st.msgID == nil {
				st.msgID = map[int64]string{}
			}
			st.msgID[ev.OutputIndex] = ev.Item.ID
		}
	case "response.reasoning_summary_part.added":
		if i, ok := st.items[ev.OutputIndex]; ok && ev.SummaryIndex > 0 {
			b.Thinking(i, "\n\n")
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		i, ok := st.items[ev.OutputIndex]
		if !ok {
			i = b.Open(events.BlockThinking)
			st.items[ev.OutputIndex] = i
		}
		b.Thinking(i, ev.Delta)
	case "response.output_text.delta", "response.refusal.delta":
		key := [2]int64{ev.OutputIndex, ev.ContentIndex}
		i, ok := st.texts[key]
		if !ok {
			i = b.Open(events.BlockText)
			st.texts[key] = i
			// The message item's id, sent back with the text so that a
			// reasoning item before it finds the item it belongs to.
			b.Block(i).TextSignature = st.msgID[ev.OutputIndex]
		}
		b.Text(i, ev.Delta)
	case "response.function_call_arguments.delta":
		if i, ok := st.items[ev.OutputIndex]; ok {
			if st.args == nil {
				st.args = map[int]bool{}
			}
			st.args[i] = true
			b.ToolArgs(i, ev.Delta)
		}
	case "response.function_call_arguments.done":
		if i, ok := st.items[ev.OutputIndex]; ok && !st.args[i] {
			b.ToolArgs(i, ev.Arguments) // arguments sent whole
		}
	case "response.output_item.done":
		if i, ok := st.items[ev.OutputIndex]; ok && ev.Item.Type == "reasoning" {
			// The whole item, encrypted content included, goes back in the
			// next request.
			b.Block(i).ThinkingSignature = ev.Item.RawJSON()
		}
	case "response.completed", "response.incomplete":
		st.usage(ev.Response)
		if ev.Response.ID != "" {
			b.SetResponseID(ev.Response.ID)
		}
		st.msg, st.err = st.end(ev.Response)
		return true
	case "response.failed":
		st.usage(ev.Response)
		e := ev.Response.Error
		st.msg, st.err = b.Fail(stream.HTTPError(codeStatus(string(e.Code)), string(e.Code), e.Message, nil, nil))
		return true
	case "error":
		st.msg, st.err = b.Fail(stream.HTTPError(codeStatus(ev.Code), ev.Code, ev.Message, nil, nil))
		return true
	}
	return false
}

func (st *respState) usage(r responses.Response) {
	if !r.JSON.Usage.Valid() {
		return
	}
	u := r.Usage
	cached := u.InputTokensDetails.CachedTokens
	st.b.SetUsage(events.Usage{Input: u.InputTokens - cached, Output: u.OutputTokens, CacheRead: cached,
		CacheWrite: u.InputTokensDetails.CacheWriteTokens, TotalTokens: u.TotalTokens})
}

func (st *respState) end(r responses.Response) (events.Message, error) {
	if r.Status == "incomplete" {
		switch r.IncompleteDetails.Reason {
		case "max_output_tokens":
			return st.b.Finish(events.StopLength)
		case "content_filter":
			return st.b.Fail(&llm.Error{Kind: llm.KindOther, Message: "the provider's content filter stopped the response (incomplete: content_filter)"})
		}
		return st.b.Finish(events.StopLength)
	}
	if st.calls > 0 {
		return st.b.Finish(events.StopToolUse)
	}
	return st.b.Finish(events.StopEnd)
}

// broken ends a stream that stopped before its terminal event.
func (st *respState) broken(ctx context.Context, err error, fail *httpFailure) (events.Message, error) {
	if err != nil {
		return st.b.Fail(classify(ctx, "responses", err, fail))
	}
	return st.b.Fail(stream.Truncated(ctx, "response.completed"))
}
