package scripted

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// Name is the provider name of scripted models (`scripted/<any name>`).
const Name = "scripted"

// Default limits of the scripted model.
const (
	DefaultContextWindow = 200000
	DefaultMaxOutput     = 32000
)

// ErrNoRule is the error of a call no rule matches.
var ErrNoRule = errors.New("no script rule matches")

// Provider answers model calls from a script.
type Provider struct {
	script *Script
	mu     struct {
		sync.Mutex
		used  []int // times each rule was used
		calls int
	}
}

// New returns a provider for s.
func New(s *Script) *Provider {
	p := &Provider{script: s}
	p.mu.used = make([]int, len(s.Rules))
	return p
}

// Model returns the scripted model called id, with the script's limits.
func (p *Provider) Model(id string) llm.Model {
	m := llm.Model{Provider: Name, ID: id, API: Name, ContextWindow: p.script.Defaults.ContextWindow, MaxOutput: p.script.Defaults.MaxOutput}
	if m.ContextWindow == 0 {
		m.ContextWindow = DefaultContextWindow
	}
	if m.MaxOutput == 0 {
		m.MaxOutput = DefaultMaxOutput
	}
	return m
}

// Calls returns how many calls the provider has answered.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.calls
}

// pick returns the reply for the context and the call's number.
func (p *Provider) pick(msgs []events.Message) (*Reply, int, error) {
	var last *events.Message
	if len(msgs) > 0 {
		last = &msgs[len(msgs)-1]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.calls++
	for i := range p.script.Rules {
		r := &p.script.Rules[i]
		if r.Times > 0 && p.mu.used[i] >= r.Times {
			continue
		}
		if !r.Match.fits(last) {
			continue
		}
		p.mu.used[i]++
		return &r.Reply, p.mu.calls, nil
	}
	return nil, p.mu.calls, fmt.Errorf("%w: %s", ErrNoRule, describe(last))
}

func (m *Match) fits(last *events.Message) bool {
	if last == nil {
		return m.LastRole == "" && m.Contains == "" && m.Tool == ""
	}
	if m.LastRole != "" && last.Role != m.LastRole {
		return false
	}
	if m.Tool != "" && (last.Role != events.RoleToolResult || last.ToolName != m.Tool) {
		return false
	}
	return m.Contains == "" || strings.Contains(last.Content.Text(), m.Contains)
}

func describe(last *events.Message) string {
	if last == nil {
		return "the context is empty"
	}
	text := last.Content.Text()
	if len(text) > 80 {
		text = text[:80] + "..."
	}
	if last.Role == events.RoleToolResult {
		return fmt.Sprintf("last message is a toolResult of %q: %q", last.ToolName, text)
	}
	return fmt.Sprintf("last message is %s: %q", last.Role, text)
}

// Stream answers one call.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	msg := events.Message{Role: events.RoleAssistant, API: req.Model.API, Provider: req.Model.Provider, Model: req.Model.ID}
	if msg.API == "" {
		msg.API = Name
	}
	fail := func(err error) (events.Message, error) {
		msg.StopReason = events.StopError
		if llm.KindOf(err) == llm.KindAborted {
			msg.StopReason = events.StopAborted
		}
		msg.ErrorMessage = err.Error()
		return msg, err
	}
	reply, n, err := p.pick(req.Messages)
	if err != nil {
		return fail(&llm.Error{Kind: llm.KindInvalidRequest, Message: err.Error(), Err: err})
	}
	d := &p.script.Defaults
	delay := d.DelayMs
	if reply.DelayMs != nil {
		delay = *reply.DelayMs
	}
	tps := d.TokensPerSecond
	if reply.TokensPerSecond != nil {
		tps = *reply.TokensPerSecond
	}
	if err := wait(ctx, time.Duration(delay)*time.Millisecond); err != nil {
		return fail(err)
	}
	if reply.Error != nil {
		return fail(classify(reply.Error))
	}
	msg.Content.Blocks = make([]events.Block, 0, len(reply.ToolCalls)+2)
	if reply.Thinking != "" {
		msg.Content.Blocks = append(msg.Content.Blocks, events.Block{Type: events.BlockThinking})
		if err := streamText(ctx, reply.Thinking, tps, func(s string) {
			b := &msg.Content.Blocks[len(msg.Content.Blocks)-1]
			b.Thinking += s
			onDelta(events.Delta{Kind: events.DeltaThinking, ContentIndex: len(msg.Content.Blocks) - 1, Delta: s})
		}); err != nil {
			return fail(err)
		}
	}
	if reply.Text != "" {
		msg.Content.Blocks = append(msg.Content.Blocks, events.Block{Type: events.BlockText})
		if err := streamText(ctx, reply.Text, tps, func(s string) {
			b := &msg.Content.Blocks[len(msg.Content.Blocks)-1]
			b.Text += s
			onDelta(events.Delta{Kind: events.DeltaText, ContentIndex: len(msg.Content.Blocks) - 1, Delta: s})
		}); err != nil {
			return fail(err)
		}
	}
	for i, tc := range reply.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(n) + "_" + strconv.Itoa(i)
		}
		args, text := tc.Arguments, tc.text
		if len(args) == 0 {
			args = []byte("{}")
		}
		if text == "" {
			text = string(args)
		}
		msg.Content.Blocks = append(msg.Content.Blocks, events.Block{Type: events.BlockToolCall, ID: id, Name: tc.Name, Arguments: args})
		onDelta(events.Delta{Kind: events.DeltaToolCall, ContentIndex: len(msg.Content.Blocks) - 1, Delta: text, ToolCallID: id, ToolName: tc.Name})
	}
	msg.StopReason = events.StopReason(reply.StopReason)
	if msg.StopReason == "" {
		msg.StopReason = events.StopEnd
		if len(reply.ToolCalls) > 0 {
			msg.StopReason = events.StopToolUse
		}
	}
	if u := reply.Usage; u != nil || d.Usage != nil {
		if u == nil {
			u = d.Usage
		}
		msg.Usage = usage(u, req, &msg)
		req.Model.Cost(msg.Usage)
	}
	return msg, nil
}

// classify turns a scripted error into the *llm.Error a real provider
// would return for it: the same classifier, on the same status and text.
func classify(e *Error) *llm.Error {
	return &llm.Error{Kind: llm.Classify(e.Status, "", e.Message), Status: e.Status, Message: e.Message,
		RetryAfter: time.Duration(e.RetryAfterMs) * time.Millisecond}
}

func usage(u *Usage, req *llm.Request, msg *events.Message) *events.Usage {
	if !u.Estimate {
		return &events.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	}
	in := len(req.SystemPrompt)
	for i := range req.Messages {
		in += size(&req.Messages[i])
	}
	return &events.Usage{Input: int64(in / 4), Output: int64(size(msg) / 4)}
}

func size(m *events.Message) int {
	n := 0
	for _, b := range m.Content.Blocks {
		n += len(b.Text) + len(b.Thinking) + len(b.Arguments) + len(b.Name)
	}
	return n
}

// streamText hands s to emit in four-character tokens at tps tokens per
// second, or all at once when tps is 0.
func streamText(ctx context.Context, s string, tps float64, emit func(string)) error {
	if tps <= 0 {
		emit(s)
		return nil
	}
	interval := time.Duration(float64(time.Second) / tps)
	first := true
	for len(s) > 0 {
		if !first {
			if err := wait(ctx, interval); err != nil {
				return err
			}
		}
		first = false
		n := 0
		for i := 0; i < 4 && n < len(s); i++ {
			_, w := utf8.DecodeRuneInString(s[n:])
			n += w
		}
		emit(s[:n])
		s = s[n:]
	}
	return nil
}

func wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return &llm.Error{Kind: llm.KindAborted, Message: "request aborted", Err: err}
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return &llm.Error{Kind: llm.KindAborted, Message: "request aborted", Err: ctx.Err()}
	}
}
