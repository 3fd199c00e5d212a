package events

import (
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// The encoders write with jsonx (internal/jsonx): one byte slice per value,
// sized once (see size.go), members appended in declaration order.

// writeOptMessage writes member k holding m, if m is not nil.
func writeOptMessage(w *jsonx.Writer, k string, m *Message) {
	if m != nil {
		w.Key(k)
		m.write(w)
	}
}

// writeMessages writes member k holding ms, if there are any.
func writeMessages(w *jsonx.Writer, k string, ms []Message) {
	if len(ms) == 0 {
		return
	}
	w.Key(k)
	w.B = append(w.B, '[')
	for i := range ms {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		ms[i].write(w)
	}
	w.B = append(w.B, ']')
}

// writeBlocks writes a list of blocks as a value; nil is [].
func writeBlocks(w *jsonx.Writer, bs []Block) {
	w.B = append(w.B, '[')
	for i := range bs {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		bs[i].write(w)
	}
	w.B = append(w.B, ']')
}

// writeArguments writes a tool call's arguments compacted, as they are if
// they are not valid JSON, and {} if empty.
func writeArguments(w *jsonx.Writer, args json.RawMessage) {
	switch {
	case jsonx.Valid(args):
		w.Key("arguments")
		w.B = jsonx.AppendCompact(w.B, args)
	case len(args) == 0:
		w.Key("arguments")
		w.B = append(w.B, "{}"...)
	default:
		w.Raw("arguments", args)
	}
}
