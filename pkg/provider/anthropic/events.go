package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
)

// consume reads the event stream into b until message_stop, an error or the
// end of the body.
func consume(ctx context.Context, s *ssestream.Stream[sdk.MessageStreamEventUnion], b *stream.Builder) (events.Message, error) {
	blocks := map[int64]int{} // Anthropic's block index -> index in the message
	stop := events.StopEnd
	var usage events.Usage
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "message_start":
			b.SetResponseID(ev.Message.ID)
			u := ev.Message.Usage
			usage = events.Usage{Input: u.InputTokens, Output: u.OutputTokens,
				CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens}
			b.SetUsage(usage)
		case "content_block_start":
			cb := ev.ContentBlock
			switch cb.Type {
			case "text":
				i := b.Open(events.BlockText)
				blocks[ev.Index] = i
				b.Text(i, cb.Text)
			case "thinking":
				i := b.Open(events.BlockThinking)
				blocks[ev.Index] = i
				b.Thinking(i, cb.Thinking)
				b.Block(i).ThinkingSignature = cb.Signature
			case "redacted_thinking":
				i := b.Open(events.BlockThinking)
				blocks[ev.Index] = i
				blk := b.Block(i)
				blk.Redacted = true
				blk.ThinkingSignature = cb.Data
			case "tool_use":
				i := b.OpenToolCall(cb.ID, cb.Name)
				blocks[ev.Index] = i
				// The API streams the input as deltas after an empty {};
				// some gateways send it whole here instead.
				if raw := cb.JSON.Input.Raw(); raw != "" && raw != "{}" && raw != "null" {
					b.ToolArgs(i, raw)
				}
			}
			// Server-side tool blocks (web search...) are not requested by
			// Cairn and are ignored.
		case "content_block_delta":
			i, ok := blocks[ev.Index]
			if !ok {
				continue
			}
			d := ev.Delta
			switch d.Type {
			case "text_delta":
				b.Text(i, d.Text)
			case "thinking_delta":
				b.Thinking(i, d.Thinking)
			case "signature_delta":
				b.Block(i).ThinkingSignature += d.Signature
			case "input_json_delta":
				b.ToolArgs(i, d.PartialJSON)
			}
		case "message_delta":
			if r := ev.Delta.StopReason; r != "" {
				var lerr *llm.Error
				if stop, lerr = stopReason(r); lerr != nil {
					return b.Fail(lerr)
				}
			}
			// Usage in message_delta is cumulative; input counts appear
			// here too when the server revises them.
			u := ev.Usage
			if u.JSON.OutputTokens.Valid() {
				usage.Output = u.OutputTokens
			}
			if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
				usage.Input = u.InputTokens
			}
			if u.JSON.CacheReadInputTokens.Valid() && u.CacheReadInputTokens > 0 {
				usage.CacheRead = u.CacheReadInputTokens
			}
			if u.JSON.CacheCreationInputTokens.Valid() && u.CacheCreationInputTokens > 0 {
				usage.CacheWrite = u.CacheCreationInputTokens
			}
			b.SetUsage(usage)
		case "message_stop":
			return b.Finish(stop)
		}
	}
	if err := s.Err(); err != nil {
		return b.Fail(classify(ctx, err))
	}
	return b.Fail(stream.Truncated(ctx, "message_stop"))
}
