package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Extra holds the JSON fields of an object that Cairn does not model. They are
// kept from decoding and written back after the known fields, in key order, so
// a round trip through Cairn's types loses nothing.
type Extra map[string]json.RawMessage

// objReader takes the fields of one JSON object out one by one; what is left
// at the end is the object's Extra. The first problem is kept in err, named
// with path.
type objReader struct {
	m    map[string]json.RawMessage
	path string
	err  error
}

func newObjReader(data []byte, path string) (*objReader, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, &FieldError{Field: path, Problem: "must be a JSON object: " + describeJSONErr(err, data)}
	}
	return &objReader{m: m, path: path}, nil
}

func describeJSONErr(err error, data []byte) string {
	if err == nil {
		return "got " + jsonKind(data)
	}
	return err.Error()
}

func jsonKind(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func (r *objReader) field(k string) string {
	if r.path == "" {
		return k
	}
	return r.path + "." + k
}

func (r *objReader) fail(k, format string, args ...any) {
	if r.err == nil {
		r.err = fieldErr(r.field(k), format, args...)
	}
}

func (r *objReader) take(k string) (json.RawMessage, bool) {
	v, ok := r.m[k]
	if ok {
		delete(r.m, k)
	}
	return v, ok
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// str reads a string field; required means absent or null is an error.
func (r *objReader) str(k string, required bool) string {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return ""
	}
	if s, ok := plainString(v); ok {
		return s
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		r.fail(k, "must be a string, got %s", jsonKind(v))
	}
	return s
}

// plainString decodes a JSON string of printable ASCII with no escapes, the
// common case, without encoding/json; ok is false for anything else.
func plainString(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return "", false
		}
	}
	return string(inner), true
}

// nullableStr reads a field that must be present and is a string or null.
func (r *objReader) nullableStr(k string) *string {
	v, ok := r.take(k)
	if !ok {
		r.fail(k, "is required (null is allowed)")
		return nil
	}
	if isNull(v) {
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		r.fail(k, "must be a string or null, got %s", jsonKind(v))
		return nil
	}
	return &s
}

func (r *objReader) boolean(k string, required bool) bool {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return false
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		r.fail(k, "must be a boolean, got %s", jsonKind(v))
	}
	return b
}

func (r *objReader) int64(k string, required bool) int64 {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		// Accept integral floats such as 1.7e12 written by JavaScript.
		var f float64
		if json.Unmarshal(v, &f) != nil || f != float64(int64(f)) {
			r.fail(k, "must be an integer, got %s", string(v))
			return 0
		}
		n = int64(f)
	}
	return n
}

func (r *objReader) intPtr(k string) *int64 {
	v, ok := r.m[k]
	if !ok || isNull(v) {
		delete(r.m, k)
		return nil
	}
	n := r.int64(k, false)
	return &n
}

func (r *objReader) strings(k string, required bool) []string {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return nil
	}
	var s []string
	if err := json.Unmarshal(v, &s); err != nil {
		r.fail(k, "must be an array of strings, got %s", jsonKind(v))
	}
	if s == nil {
		s = []string{}
	}
	return s
}

// raw reads any JSON value, compacted; required means it must be present and
// not null.
func (r *objReader) raw(k string, required bool) json.RawMessage {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return nil
	}
	return compact(v)
}

// object reads a field that must hold a JSON object and decodes it with dec.
func (r *objReader) object(k string, required bool, dec func([]byte, string) error) bool {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return false
	}
	if err := dec(v, r.field(k)); err != nil && r.err == nil {
		r.err = err
	}
	return true
}

// rest returns the fields nobody took, compacted; nil if none.
func (r *objReader) rest() Extra {
	if len(r.m) == 0 {
		return nil
	}
	x := make(Extra, len(r.m))
	for k, v := range r.m {
		x[k] = compact(v)
	}
	return x
}

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

// jsonNames returns the JSON member names of struct type t's fields.
func jsonNames(t reflect.Type) map[string]bool {
	if v, ok := jsonNamesCache.Load(t); ok {
		return v.(map[string]bool)
	}
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
	jsonNamesCache.Store(t, names)
	return names
}

var jsonNamesCache sync.Map // reflect.Type -> map[string]bool

// decodeKnown decodes into v, a pointer to a struct with json tags, the members
// of r whose keys are exactly the JSON names of v's fields, and takes them out
// of r. encoding/json alone would also match keys that differ in case, so an
// unknown member "ID" could overwrite "id".
func (r *objReader) decodeKnown(v any) error {
	known := jsonNames(reflect.TypeOf(v).Elem())
	sub := make(map[string]json.RawMessage, len(known))
	for k, raw := range r.m {
		if known[k] {
			sub[k] = raw
			delete(r.m, k)
		}
	}
	data, err := json.Marshal(sub)
	if err != nil {
		return fieldErr(r.path, "invalid JSON: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return prefixed(r.path, describeDecodeErr(err))
	}
	return nil
}

// message reads a field holding one message; absent or null gives nil.
func (r *objReader) message(k string, required bool) *Message {
	var m *Message
	r.object(k, required, func(b []byte, p string) error {
		m = new(Message)
		return m.decode(b, p)
	})
	return m
}

// messages reads a field holding an array of messages; absent or null gives nil.
func (r *objReader) messages(k string) []Message {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		r.fail(k, "must be an array of messages, got %s", jsonKind(v))
		return nil
	}
	msgs := make([]Message, len(raws))
	for i, raw := range raws {
		if err := msgs[i].decode(raw, r.field(k)+"["+strconv.Itoa(i)+"]"); err != nil {
			if r.err == nil {
				r.err = err
			}
			return nil
		}
	}
	return msgs
}

// blocks reads a field holding an array of content blocks.
func (r *objReader) blocks(k string, required bool) []Block {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		r.fail(k, "must be an array of content blocks, got %s", jsonKind(v))
		return nil
	}
	blocks := make([]Block, len(raws))
	for i, raw := range raws {
		if err := blocks[i].decode(raw, r.field(k)+"["+strconv.Itoa(i)+"]"); err != nil {
			if r.err == nil {
				r.err = err
			}
			return nil
		}
	}
	return blocks
}

// float reads an optional number field.
func (r *objReader) float(k string) float64 {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		return 0
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		r.fail(k, "must be a number, got %s", jsonKind(v))
	}
	return f
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
