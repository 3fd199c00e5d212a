package events

import (
	"bytes"
	"encoding/json"
)

// Content block types.
const (
	BlockText     = "text"
	BlockImage    = "image"
	BlockThinking = "thinking"
	BlockToolCall = "toolCall"
)

// Block is one content block of a message: text, image, thinking or a tool
// call. Only the fields of its Type are meaningful.
type Block struct {
	Type string `json:"type"`

	// text
	Text          string `json:"text,omitempty"`
	TextSignature string `json:"textSignature,omitempty"`

	// thinking; the signature is kept for the next request to the provider.
	Thinking          string `json:"thinking,omitempty"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	Redacted          bool   `json:"redacted,omitempty"`

	// image: base64 Data, or Blob (the digest of the data in the blobs bucket)
	// when the log moved a large image out of the entry.
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Blob     string `json:"blob,omitempty"`

	// toolCall: Arguments is the JSON object the model produced.
	ID               string          `json:"id,omitempty"`
	Name             string          `json:"name,omitempty"`
	Arguments        json.RawMessage `json:"arguments,omitempty"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`

	Extra Extra `json:"-"`
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// MarshalJSON writes the canonical form of b.
func (b Block) MarshalJSON() ([]byte, error) {
	w := jsonWriter{b: make([]byte, 0, sizeHint(b.size()))}
	b.write(&w)
	return w.result()
}

// write writes the canonical form of b.
func (b *Block) write(w *jsonWriter) {
	n := w.begin()
	w.str("type", b.Type)
	switch b.Type {
	case BlockText:
		w.str("text", b.Text)
		w.optStr("textSignature", b.TextSignature)
	case BlockThinking:
		w.str("thinking", b.Thinking)
		w.optStr("thinkingSignature", b.ThinkingSignature)
		w.optBool("redacted", b.Redacted)
	case BlockImage:
		w.optStr("data", b.Data)
		w.str("mimeType", b.MimeType)
		w.optStr("blob", b.Blob)
	case BlockToolCall:
		w.str("id", b.ID)
		w.str("name", b.Name)
		w.arguments(b.Arguments)
		w.optStr("thoughtSignature", b.ThoughtSignature)
	}
	w.extra(b.Extra)
	w.end(n)
}

// arguments writes a tool call's arguments compacted, as they are if they
// are not valid JSON, and {} if empty.
func (w *jsonWriter) arguments(args json.RawMessage) {
	ix := indexJSON(args)
	switch {
	case ix != nil:
		ix.release()
		w.key("arguments")
		w.b = appendCompact(w.b, args)
	case len(args) == 0:
		w.key("arguments")
		w.b = append(w.b, "{}"...)
	default:
		w.raw("arguments", args)
	}
}

// UnmarshalJSON decodes and validates a block.
func (b *Block) UnmarshalJSON(data []byte) error {
	ix, err := indexObject(data)
	if err != nil {
		return err
	}
	defer ix.release()
	return b.decode(data, path{ix: ix})
}

// decode decodes data, a span of valid JSON, named p in errors.
func (b *Block) decode(data []byte, p path) error {
	r, err := readValidObject(data, p)
	if err != nil {
		return err
	}
	defer r.release()
	*b = Block{Type: r.name("type", true)}
	switch b.Type {
	case BlockText:
		b.Text = r.str("text", true)
		b.TextSignature = r.str("textSignature", false)
	case BlockThinking:
		b.Thinking = r.str("thinking", true)
		b.ThinkingSignature = r.str("thinkingSignature", false)
		b.Redacted = r.boolean("redacted", false)
	case BlockImage:
		b.Data = r.str("data", false)
		b.MimeType = r.str("mimeType", true)
		b.Blob = r.str("blob", false)
		if r.err == nil && b.Data == "" && b.Blob == "" {
			r.fail("data", "is required (an image needs data or a blob reference)")
		}
	case BlockToolCall:
		b.ID = r.str("id", true)
		b.Name = r.str("name", true)
		b.Arguments = r.raw("arguments", true)
		if r.err == nil && (len(b.Arguments) == 0 || b.Arguments[0] != '{') {
			r.fail("arguments", "must be a JSON object")
		}
		b.ThoughtSignature = r.str("thoughtSignature", false)
	case "":
	default:
		r.fail("type", "unknown content block type %q (want text, image, thinking or toolCall)", b.Type)
	}
	if r.err != nil {
		return r.err
	}
	b.Extra = r.rest()
	return nil
}

// Content is the content of a message: a list of blocks. pi allows a user
// message's content to be a bare string; String records that form so that it
// is written back the same way.
type Content struct {
	Blocks []Block
	String bool // written as a JSON string (Blocks is then one text block)
}

// TextContent returns content made of one text block.
func TextContent(s string) Content { return Content{Blocks: []Block{TextBlock(s)}} }

// Text returns the text of every text block, joined by newlines.
func (c Content) Text() string {
	var b bytes.Buffer
	for _, blk := range c.Blocks {
		if blk.Type != BlockText {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(blk.Text)
	}
	return b.String()
}

// MarshalJSON writes a string when c.String is set, else an array of blocks.
func (c Content) MarshalJSON() ([]byte, error) {
	w := jsonWriter{b: make([]byte, 0, sizeHint(blocksSize(c.Blocks)))}
	c.write(&w)
	return w.result()
}

// write writes c as the value of a member whose key is written.
func (c *Content) write(w *jsonWriter) {
	if c.String && len(c.Blocks) <= 1 {
		s := ""
		if len(c.Blocks) == 1 {
			s = c.Blocks[0].Text
		}
		w.b = appendJSONString(w.b, s, false)
		return
	}
	w.blocks(c.Blocks)
}

// blocks writes a list of blocks; nil is [].
func (w *jsonWriter) blocks(bs []Block) {
	w.b = append(w.b, '[')
	for i := range bs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		bs[i].write(w)
	}
	w.b = append(w.b, ']')
}

// UnmarshalJSON accepts a string or an array of blocks.
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	ix := indexJSON(data)
	if ix == nil {
		if len(data) > 0 && data[0] == '"' {
			var s string
			err := json.Unmarshal(data, &s)
			return fieldErr("", "invalid string: %v", err)
		}
		return fieldErr("", "must be a string or an array of content blocks, got %s", jsonKind(data))
	}
	defer ix.release()
	return c.decode(data, path{ix: ix})
}

// decode decodes data, a span of valid JSON, named p in errors.
func (c *Content) decode(data []byte, p path) error {
	data = trimSpace(data)
	switch data[0] {
	case '"':
		*c = Content{Blocks: []Block{TextBlock(unquote(data))}, String: true}
		return nil
	case 'n': // null: no blocks, as encoding/json decodes it into a slice
		*c = Content{Blocks: []Block{}}
		return nil
	case '[':
	default:
		return fieldErr(p.String(), "must be a string or an array of content blocks, got %s", jsonKind(data))
	}
	blocks := make([]Block, countElements(data, p.ix))
	err := forElements(data, p.ix, func(i int, v []byte) error {
		return blocks[i].decode(v, p.index(i))
	})
	if err != nil {
		return err
	}
	*c = Content{Blocks: blocks}
	return nil
}

// Usage counts the tokens of one model call and what they cost.
type Usage struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cacheRead"`
	CacheWrite  int64 `json:"cacheWrite"`
	TotalTokens int64 `json:"totalTokens"`
	Cost        Cost  `json:"cost"`

	extra string // members Cairn does not model, a JSON object (kept, comparable)
}

// Cost is in US dollars.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`

	extra string // members Cairn does not model, a JSON object (kept, comparable)
}

// IsZero reports whether u counts nothing.
func (u Usage) IsZero() bool { return u == Usage{} }

// MarshalJSON writes every count, then the members Cairn does not model.
func (u Usage) MarshalJSON() ([]byte, error) {
	var w jsonWriter
	u.write(&w)
	return w.result()
}

// write writes u; its cost, written by encoding/json before, is written as
// in an envelope.
func (u *Usage) write(w *jsonWriter) {
	n := w.begin()
	w.int("input", u.Input)
	w.int("output", u.Output)
	w.int("cacheRead", u.CacheRead)
	w.int("cacheWrite", u.CacheWrite)
	w.int("totalTokens", u.TotalTokens)
	w.key("cost")
	in := w.inEnvelope
	w.inEnvelope = true
	u.Cost.write(w)
	w.inEnvelope = in
	if u.extra != "" {
		w.extra(parseExtra(u.extra))
	}
	w.end(n)
}

// UnmarshalJSON decodes usage; counts default to zero.
func (u *Usage) UnmarshalJSON(data []byte) error {
	ix, err := indexObject(data)
	if err != nil {
		return err
	}
	defer ix.release()
	return u.decode(data, path{ix: ix})
}

// decode decodes data, a span of valid JSON, named p in errors.
func (u *Usage) decode(data []byte, p path) error {
	r, err := readValidObject(data, p)
	if err != nil {
		return err
	}
	defer r.release()
	*u = Usage{
		Input:       r.int64("input", false),
		Output:      r.int64("output", false),
		CacheRead:   r.int64("cacheRead", false),
		CacheWrite:  r.int64("cacheWrite", false),
		TotalTokens: r.int64("totalTokens", false),
	}
	r.object("cost", false, func(b []byte, p path) error { return u.Cost.decode(b, p) })
	if r.err != nil {
		return r.err
	}
	u.extra = formatExtra(r.rest())
	return nil
}

// MarshalJSON writes every amount, then the members Cairn does not model.
func (c Cost) MarshalJSON() ([]byte, error) {
	var w jsonWriter
	c.write(&w)
	return w.result()
}

// write writes c as the value of a member whose key is written.
func (c *Cost) write(w *jsonWriter) {
	n := w.begin()
	w.float("input", c.Input)
	w.float("output", c.Output)
	w.float("cacheRead", c.CacheRead)
	w.float("cacheWrite", c.CacheWrite)
	w.float("total", c.Total)
	if c.extra != "" {
		w.extra(parseExtra(c.extra))
	}
	w.end(n)
}

// UnmarshalJSON decodes a cost; amounts default to zero.
func (c *Cost) UnmarshalJSON(data []byte) error {
	ix, err := indexObject(data)
	if err != nil {
		return err
	}
	defer ix.release()
	return c.decode(data, path{ix: ix})
}

// decode decodes data, a span of valid JSON, named p in errors.
func (c *Cost) decode(data []byte, p path) error {
	r, err := readValidObject(data, p)
	if err != nil {
		return err
	}
	defer r.release()
	*c = Cost{
		Input:      r.float("input"),
		Output:     r.float("output"),
		CacheRead:  r.float("cacheRead"),
		CacheWrite: r.float("cacheWrite"),
		Total:      r.float("total"),
	}
	if r.err != nil {
		return r.err
	}
	c.extra = formatExtra(r.rest())
	return nil
}
