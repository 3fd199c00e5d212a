package events

import (
	"bytes"
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
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
	w := jsonx.Writer{B: make([]byte, 0, sizeHint(b.size())), InEnvelope: true}
	b.write(&w)
	return w.Result()
}

// write writes the canonical form of b.
func (b *Block) write(w *jsonx.Writer) {
	n := w.Begin()
	w.Str("type", b.Type)
	switch b.Type {
	case BlockText:
		w.Str("text", b.Text)
		w.OptStr("textSignature", b.TextSignature)
	case BlockThinking:
		w.Str("thinking", b.Thinking)
		w.OptStr("thinkingSignature", b.ThinkingSignature)
		w.OptBool("redacted", b.Redacted)
	case BlockImage:
		w.OptStr("data", b.Data)
		w.Str("mimeType", b.MimeType)
		w.OptStr("blob", b.Blob)
	case BlockToolCall:
		w.Str("id", b.ID)
		w.Str("name", b.Name)
		writeArguments(w, b.Arguments)
		w.OptStr("thoughtSignature", b.ThoughtSignature)
	}
	w.Extra(b.Extra)
	w.End(n)
}

// UnmarshalJSON decodes and validates a block.
func (b *Block) UnmarshalJSON(data []byte) error {
	ix, err := indexObject(data)
	if err != nil {
		return err
	}
	defer ix.Release()
	return b.decode(data, ix.Root())
}

// decode decodes data, a span of valid JSON, named p in errors.
func (b *Block) decode(data []byte, p jsonx.Path) error {
	r, err := readValidObject(data, p)
	if err != nil {
		return err
	}
	defer r.Release()
	*b = Block{Type: r.Name("type", true, names)}
	switch b.Type {
	case BlockText:
		b.Text = r.Str("text", true)
		b.TextSignature = r.Str("textSignature", false)
	case BlockThinking:
		b.Thinking = r.Str("thinking", true)
		b.ThinkingSignature = r.Str("thinkingSignature", false)
		b.Redacted = r.Bool("redacted", false)
	case BlockImage:
		b.Data = r.Str("data", false)
		b.MimeType = r.Str("mimeType", true)
		b.Blob = r.Str("blob", false)
		if r.Err() == nil && b.Data == "" && b.Blob == "" {
			r.Fail("data", "is required (an image needs data or a blob reference)")
		}
	case BlockToolCall:
		b.ID = r.Str("id", true)
		b.Name = r.Str("name", true)
		b.Arguments = r.Raw("arguments", true)
		if r.Err() == nil && (len(b.Arguments) == 0 || b.Arguments[0] != '{') {
			r.Fail("arguments", "must be a JSON object")
		}
		b.ThoughtSignature = r.Str("thoughtSignature", false)
	case "":
	default:
		r.Fail("type", "unknown content block type %q (want text, image, thinking or toolCall)", b.Type)
	}
	if r.Err() != nil {
		return fieldError(r.Err())
	}
	b.Extra = r.Rest()
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
	w := jsonx.Writer{B: make([]byte, 0, sizeHint(blocksSize(c.Blocks))), InEnvelope: true}
	c.write(&w)
	return w.Result()
}

// write writes c as the value of a member whose key is written.
func (c *Content) write(w *jsonx.Writer) {
	if c.String && len(c.Blocks) <= 1 {
		s := ""
		if len(c.Blocks) == 1 {
			s = c.Blocks[0].Text
		}
		w.StrValue(s)
		return
	}
	writeBlocks(w, c.Blocks)
}

// UnmarshalJSON accepts a string or an array of blocks.
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	ix, err := jsonx.Check(data)
	if err != nil {
		return fieldError(err)
	}
	defer ix.Release()
	return c.decode(data, ix.Root())
}

// decode decodes data, a span of valid JSON, named p in errors.
func (c *Content) decode(data []byte, p jsonx.Path) error {
	data = jsonx.TrimSpace(data)
	switch data[0] {
	case '"':
		*c = Content{Blocks: []Block{TextBlock(jsonx.Unquote(data))}, String: true}
		return nil
	case 'n': // null: no blocks, as encoding/json decodes it into a slice
		*c = Content{Blocks: []Block{}}
		return nil
	case '[':
	default:
		return fieldErr(p.String(), "must be a string or an array of content blocks, got %s", jsonx.Kind(data))
	}
	blocks := make([]Block, jsonx.Count(data, p))
	err := jsonx.Elements(data, p, func(i int, v []byte, p jsonx.Path) error {
		return blocks[i].decode(v, p)
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
	var w jsonx.Writer
	u.write(&w)
	return w.Result()
}

// write writes u; its cost, written by encoding/json before, is written as
// in an envelope.
func (u *Usage) write(w *jsonx.Writer) {
	n := w.Begin()
	w.Int("input", u.Input)
	w.Int("output", u.Output)
	w.Int("cacheRead", u.CacheRead)
	w.Int("cacheWrite", u.CacheWrite)
	w.Int("totalTokens", u.TotalTokens)
	w.Key("cost")
	in := w.InEnvelope
	w.InEnvelope = true
	u.Cost.write(w)
	w.InEnvelope = in
	if u.extra != "" {
		w.Extra(parseExtra(u.extra))
	}
	w.End(n)
}

// UnmarshalJSON decodes usage; counts default to zero.
func (u *Usage) UnmarshalJSON(data []byte) error {
	ix, err := indexObject(data)
	if err != nil {
		return err
	}
	defer ix.Release()
	return u.decode(data, ix.Root())
}

// decode decodes data, a span of valid JSON, named p in errors.
func (u *Usage) decode(data []byte, p jsonx.Path) error {
	r, err := readValidObject(data, p)
	if err != nil {
		return err
	}
	defer r.Release()
	*u = Usage{
		Input:       r.Int64("input", false),
		Output:      r.Int64("output", false),
		CacheRead:   r.Int64("cacheRead", false),
		CacheWrite:  r.Int64("cacheWrite", false),
		TotalTokens: r.Int64("totalTokens", false),
	}
	r.Object("cost", false, func(b []byte, p jsonx.Path) error { return u.Cost.decode(b, p) })
	if r.Err() != nil {
		return fieldError(r.Err())
	}
	u.extra = formatExtra(r.Rest())
	return nil
}

// MarshalJSON writes every amount, then the members Cairn does not model.
func (c Cost) MarshalJSON() ([]byte, error) {
	var w jsonx.Writer
	c.write(&w)
	return w.Result()
}

// write writes c as the value of a member whose key is written.
func (c *Cost) write(w *jsonx.Writer) {
	n := w.Begin()
	w.Float("input", c.Input)
	w.Float("output", c.Output)
	w.Float("cacheRead", c.CacheRead)
	w.Float("cacheWrite", c.CacheWrite)
	w.Float("total", c.Total)
	if c.extra != "" {
		w.Extra(parseExtra(c.extra))
	}
	w.End(n)
}

// UnmarshalJSON decodes a cost; amounts default to zero.
func (c *Cost) UnmarshalJSON(data []byte) error {
	ix, err := indexObject(data)
	if err != nil {
		return err
	}
	defer ix.Release()
	return c.decode(data, ix.Root())
}

// decode decodes data, a span of valid JSON, named p in errors.
func (c *Cost) decode(data []byte, p jsonx.Path) error {
	r, err := readValidObject(data, p)
	if err != nil {
		return err
	}
	defer r.Release()
	*c = Cost{
		Input:      r.Float("input"),
		Output:     r.Float("output"),
		CacheRead:  r.Float("cacheRead"),
		CacheWrite: r.Float("cacheWrite"),
		Total:      r.Float("total"),
	}
	if r.Err() != nil {
		return fieldError(r.Err())
	}
	c.extra = formatExtra(r.Rest())
	return nil
}
