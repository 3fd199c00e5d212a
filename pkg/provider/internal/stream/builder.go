package stream

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// Builder assembles one assistant message from streamed pieces and reports
// each piece as a delta.
type Builder struct {
	model   llm.Model
	onDelta func(events.Delta)
	msg     events.Message
	args    map[int]*bytes.Buffer    // tool-call argument text by block index
	text    map[int]*strings.Builder // text or thinking by block index
	usage   events.Usage
	secrets []string
}

// Redact makes Fail remove secret from error messages, for servers that
// echo the credential they rejected.
func (b *Builder) Redact(secret string) {
	if secret != "" {
		b.secrets = append(b.secrets, secret)
	}
}

// NewBuilder starts the assistant message of one call to model through api.
// onDelta may be nil.
func NewBuilder(model llm.Model, api string, onDelta func(events.Delta)) *Builder {
	if onDelta == nil {
		onDelta = func(events.Delta) {}
	}
	return &Builder{
		model:   model,
		onDelta: onDelta,
		args:    map[int]*bytes.Buffer{},
		text:    map[int]*strings.Builder{},
		msg: events.Message{
			Role:      events.RoleAssistant,
			Content:   events.Content{Blocks: []events.Block{}},
			API:       api,
			Provider:  model.Provider,
			Model:     model.ID,
			Timestamp: time.Now().UnixMilli(),
		},
	}
}

// Len is the number of blocks so far.
func (b *Builder) Len() int { return len(b.msg.Content.Blocks) }

// Block returns the block at index i.
func (b *Builder) Block(i int) *events.Block { return &b.msg.Content.Blocks[i] }

// last returns the index of the last block if it has type typ, else -1.
func (b *Builder) last(typ string) int {
	n := len(b.msg.Content.Blocks)
	if n > 0 && b.msg.Content.Blocks[n-1].Type == typ {
		return n - 1
	}
	return -1
}

// Open appends an empty block of type typ and returns its index.
func (b *Builder) Open(typ string) int {
	b.msg.Content.Blocks = append(b.msg.Content.Blocks, events.Block{Type: typ})
	return len(b.msg.Content.Blocks) - 1
}

// OpenToolCall appends a tool call block and returns its index.
func (b *Builder) OpenToolCall(id, name string) int {
	b.msg.Content.Blocks = append(b.msg.Content.Blocks, events.Block{Type: events.BlockToolCall, ID: id, Name: name})
	i := len(b.msg.Content.Blocks) - 1
	b.args[i] = &bytes.Buffer{}
	return i
}

// Text appends s to the text block at index i and reports it.
func (b *Builder) Text(i int, s string) {
	if s == "" {
		return
	}
	b.buf(i).WriteString(s)
	b.onDelta(events.Delta{Kind: events.DeltaText, ContentIndex: i, Delta: s})
}

// Thinking appends s to the thinking block at index i and reports it.
func (b *Builder) Thinking(i int, s string) {
	if s == "" {
		return
	}
	b.buf(i).WriteString(s)
	b.onDelta(events.Delta{Kind: events.DeltaThinking, ContentIndex: i, Delta: s})
}

// buf is the text of block i so far: kept in a builder, not the block, so
// that long outputs do not copy the whole text at every delta.
func (b *Builder) buf(i int) *strings.Builder {
	t, ok := b.text[i]
	if !ok {
		t = &strings.Builder{}
		b.text[i] = t
	}
	return t
}

// AppendText adds s to the last block if it is text, else to a new text
// block, and returns the block's index. For APIs without explicit block
// boundaries (Chat Completions).
func (b *Builder) AppendText(s string) int {
	i := b.last(events.BlockText)
	if i < 0 {
		i = b.Open(events.BlockText)
	}
	b.Text(i, s)
	return i
}

// AppendThinking is AppendText for thinking.
func (b *Builder) AppendThinking(s string) int {
	i := b.last(events.BlockThinking)
	if i < 0 {
		i = b.Open(events.BlockThinking)
	}
	b.Thinking(i, s)
	return i
}

// ToolArgs appends a fragment of the JSON arguments of the tool call at
// index i and reports it.
func (b *Builder) ToolArgs(i int, s string) {
	if s == "" {
		return
	}
	b.args[i].WriteString(s)
	blk := &b.msg.Content.Blocks[i]
	b.onDelta(events.Delta{Kind: events.DeltaToolCall, ContentIndex: i, Delta: s, ToolCallID: blk.ID, ToolName: blk.Name})
}

// ArgsSoFar returns the argument text of the tool call at index i so far.
func (b *Builder) ArgsSoFar(i int) []byte { return b.args[i].Bytes() }

// SetUsage records the usage the provider reported (replacing earlier
// reports: providers send running totals).
func (b *Builder) SetUsage(u events.Usage) {
	b.usage = u
}

// SetResponseID records the provider's id of the response.
func (b *Builder) SetResponseID(id string) { b.msg.ResponseID = id }

// Finish ends a successful stream with stop reason stop. A success whose
// input exceeds the model's context window (a silent overflow: some servers
// take it, or truncate) stays a success: the reply is kept and the harness
// compacts after it, as pi does; it is not an error to retry.
func (b *Builder) Finish(stop events.StopReason) (events.Message, error) {
	return b.seal(stop), nil
}

// Fail ends the stream with err: the message keeps what arrived, with stop
// reason aborted for KindAborted and error otherwise.
func (b *Builder) Fail(err *llm.Error) (events.Message, error) {
	stop := events.StopError
	if err.Kind == llm.KindAborted {
		stop = events.StopAborted
	}
	for _, s := range b.secrets {
		err.Message = strings.ReplaceAll(err.Message, s, "[redacted]")
	}
	m := b.seal(stop)
	m.ErrorMessage = err.Error()
	b.msg = m
	return m, err
}

func (b *Builder) seal(stop events.StopReason) events.Message {
	for i, buf := range b.args {
		b.msg.Content.Blocks[i].Arguments = ObjectArgs(buf.Bytes())
	}
	for i, t := range b.text {
		if blk := &b.msg.Content.Blocks[i]; blk.Type == events.BlockThinking {
			blk.Thinking = t.String()
		} else {
			blk.Text = t.String()
		}
	}
	u := b.usage
	b.model.Cost(&u)
	b.msg.Usage = &u
	b.msg.StopReason = stop
	return b.msg
}

// ObjectArgs returns raw as tool-call arguments: a copy of raw when it is a
// JSON object, else {} (empty, cut short or not JSON; the tool's schema
// validation then reports what is missing).
func ObjectArgs(raw []byte) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' && json.Valid(raw) {
		return bytes.Clone(raw)
	}
	return json.RawMessage("{}")
}
