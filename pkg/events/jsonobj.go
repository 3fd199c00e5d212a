package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Extra holds the JSON fields of an object that Cairn does not model. They are
// kept from decoding and written back after the known fields, in key order, so
// a round trip through Cairn's types loses nothing.
type Extra map[string]json.RawMessage

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return slices.Clone(v)
	}
	return b.Bytes()
}

// objWriter writes one JSON object field by field, in call order.
type objWriter struct {
	b   bytes.Buffer
	n   int
	err error
}

func newObjWriter() *objWriter {
	w := &objWriter{}
	w.b.WriteByte('{')
	return w
}

func (w *objWriter) key(k string) {
	if w.n > 0 {
		w.b.WriteByte(',')
	}
	w.n++
	if plainASCII(k, true) {
		w.b.WriteByte('"')
		w.b.WriteString(k)
		w.b.WriteString(`":`)
		return
	}
	kb, _ := json.Marshal(k)
	w.b.Write(kb)
	w.b.WriteByte(':')
}

// plainASCII reports whether s is printable ASCII that encoding/json writes
// as it is between quotes: no quote, backslash or control character, and,
// with html, none of < > & (which json.Marshal escapes).
func plainASCII(s string, html bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
			return false
		}
	}
	return true
}

// value writes k with v marshalled by encoding/json.
func (w *objWriter) value(k string, v any) {
	data, err := marshalNoEscape(v)
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("%s: %w", k, err)
		}
		return
	}
	w.key(k)
	w.b.Write(data)
}

func (w *objWriter) rawValue(k string, v json.RawMessage) {
	w.key(k)
	w.b.Write(v)
}

func (w *objWriter) str(k, v string) {
	if plainASCII(v, false) {
		// The common case, written without encoding/json: same bytes.
		w.key(k)
		w.b.WriteByte('"')
		w.b.WriteString(v)
		w.b.WriteByte('"')
		return
	}
	w.value(k, v)
}
func (w *objWriter) optStr(k, v string) {
	if v != "" {
		w.value(k, v)
	}
}
func (w *objWriter) optBool(k string, v bool) {
	if v {
		w.value(k, v)
	}
}
func (w *objWriter) optRaw(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.rawValue(k, v)
	}
}

func (w *objWriter) nullableStr(k string, v *string) {
	if v == nil {
		w.rawValue(k, json.RawMessage("null"))
		return
	}
	w.value(k, *v)
}

// extra writes the fields of x that the known fields did not already write,
// in key order.
func (w *objWriter) extra(x Extra) {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.rawValue(k, x[k])
	}
}

func (w *objWriter) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	w.b.WriteByte('}')
	return w.b.Bytes(), nil
}

// marshalNoEscape is json.Marshal without HTML escaping, so text stays as the
// model or the user wrote it.
//
// Messages, content and blocks write their own canonical (compact) form
// directly: through encoding/json it would be validated and compacted again
// at every level of nesting, which made encoding an entry cost more than
// appending it to the log.
func marshalNoEscape(v any) ([]byte, error) {
	switch x := v.(type) {
	case *Message:
		if x != nil {
			return x.MarshalJSON()
		}
	case Content:
		return x.MarshalJSON()
	case []Block:
		if x != nil {
			out := []byte{'['}
			for i := range x {
				if i > 0 {
					out = append(out, ',')
				}
				b, err := x[i].MarshalJSON()
				if err != nil {
					return nil, err
				}
				out = append(out, b...)
			}
			return append(out, ']'), nil
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// formatExtra and parseExtra keep an Extra as a JSON object in a string, for
// types that must stay comparable with ==.
func formatExtra(x Extra) string {
	if len(x) == 0 {
		return ""
	}
	w := newObjWriter()
	w.extra(x)
	b, _ := w.bytes()
	return string(b)
}

func parseExtra(s string) Extra {
	if s == "" {
		return nil
	}
	var x Extra
	_ = json.Unmarshal([]byte(s), &x) // written by formatExtra: always an object
	return x
}
