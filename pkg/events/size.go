package events

// Sizes the encoders reserve before they write, so that the output grows
// once: the length of the long members, plus room for keys, short members
// and escapes. An estimate only; too small costs a copy, not a mistake.

func sizeHint(n int) int { return n + n/8 + 256 }

func (b *Block) size() int {
	return 96 + len(b.Text) + len(b.TextSignature) + len(b.Thinking) + len(b.ThinkingSignature) +
		len(b.Data) + len(b.Arguments) + len(b.ThoughtSignature) + extraSize(b.Extra)
}

func blocksSize(bs []Block) int {
	n := 2
	for i := range bs {
		n += bs[i].size()
	}
	return n
}

func (m *Message) size() int {
	if m == nil {
		return 0
	}
	return 320 + blocksSize(m.Content.Blocks) + len(m.Details) + len(m.ErrorMessage) + len(m.Summary) +
		len(m.Command) + len(m.Output) + extraSize(m.Extra)
}

func extraSize(x Extra) int {
	n := 0
	for k, v := range x {
		n += len(k) + len(v) + 4
	}
	return n
}

func (e *Entry) size() int {
	return e.Message.size() + blocksSize(e.Content.Blocks) + len(e.SystemPrompt) + len(e.Summary) +
		len(e.Details) + len(e.Data) + len(e.Arguments) + extraSize(e.Extra)
}

func (ev *Event) size() int {
	n := ev.Message.size() + ev.Partial.size() + ev.Result.size() + len(ev.Args)
	for i := range ev.ToolResults {
		n += ev.ToolResults[i].size()
	}
	for i := range ev.Messages {
		n += ev.Messages[i].size()
	}
	if ev.Delta != nil {
		n += len(ev.Delta.Delta)
	}
	return n
}
