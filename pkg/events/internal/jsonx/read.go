package jsonx

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// Reader takes the members of one JSON object out one by one; what is left
// at the end is the object's Rest. The first problem is kept (see Err),
// named with the reader's path.
//
// The object is split once into the spans of its members (see scan.go);
// nested objects are read from their spans without being checked again:
// only the entry points validate, once, with ReadObject or IndexObject. A
// key that appears twice counts once, with its last value, as with
// encoding/json into a map. Nothing a reader returns aliases the input:
// strings, raw values and Rest are copies.
type Reader struct {
	data []byte   // the object
	keys []byte   // keys that had escapes, decoded
	ms   []member // data's members
	path Path
	err  error
	lo   int  // where ms starts in path.ix.members
	own  bool // path.ix is this reader's to release
}

// ReadObject reads data, which must be valid JSON, all of it, holding an
// object. Call Release when done.
func ReadObject(data []byte) (Reader, error) {
	ix, err := Check(data)
	if err != nil {
		return Reader{}, err
	}
	r, err := ReadValidObject(data, Path{ix: ix})
	if err != nil {
		ix.Release()
		return r, err
	}
	r.own = true
	return r, nil
}

// ReadValidObject reads data, which must be a span of a document checked by
// ReadObject or IndexObject (p carries its index), holding an object. Call
// Release when done.
func ReadValidObject(data []byte, p Path) (Reader, error) {
	data = TrimSpace(data)
	if data[0] != '{' {
		return Reader{}, notObject(data, p.String())
	}
	r := Reader{data: data, path: p}
	ix := p.ix
	if ix == nil { // only in tests
		r.ms = r.split(nil)
		return r, nil
	}
	// The members of nested objects go after their parent's in the
	// document's index, and are dropped when their reader is released:
	// a stack, so a document's readers share one slice.
	r.lo = len(ix.members)
	ix.members = r.split(ix.members)
	r.ms = ix.members[r.lo:len(ix.members):len(ix.members)]
	return r, nil
}

// Release hands r's members back for reuse; r must not be used after.
func (r *Reader) Release() {
	if ix := r.path.ix; ix != nil && r.data != nil {
		ix.members = ix.members[:r.lo]
	}
	if r.own {
		r.path.ix.Release()
		r.own = false
	}
	r.data, r.ms = nil, nil
}

// notObject is the error for data, valid JSON, that is not an object.
func notObject(data []byte, path string) error {
	return fieldErr(path, "must be a JSON object, got %s", Kind(data))
}

// IndexObject validates data, all of it, and returns its index for a
// decoder that reads it with ReadValidObject from ix.Root(). Release the
// index after.
func IndexObject(data []byte) (*Index, error) {
	ix, err := Check(data)
	if err != nil {
		return nil, err
	}
	if d := TrimSpace(data); d[0] != '{' {
		ix.Release()
		return nil, notObject(d, "")
	}
	return ix, nil
}

// Kind names the kind of the JSON value data in errors: "an object", "an
// array", "a string", "a boolean", "null", "a number", or "nothing".
func Kind(data []byte) string {
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

// Path returns the path of the object r reads.
func (r *Reader) Path() Path { return r.path }

// Err returns the first problem found, or nil.
func (r *Reader) Err() error { return r.err }

// SetErr records err as r's problem unless one is recorded already.
func (r *Reader) SetErr(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Fail records a problem with member k (see Err).
func (r *Reader) Fail(k, format string, args ...any) {
	if r.err == nil {
		r.err = fieldErr(r.path.Key(k).String(), format, args...)
	}
}

// key returns m's key, decoded.
func (r *Reader) key(m *member) []byte {
	if m.esc {
		return r.keys[m.ks:m.ke]
	}
	return r.data[m.ks:m.ke]
}

// val returns m's value as it appears in the input.
func (r *Reader) val(m *member) []byte { return r.data[m.vs:m.ve] }

// Take returns the value of k, the last one if k appears more than once, and
// takes every member named k out of the object.
func (r *Reader) Take(k string) (v []byte, ok bool) {
	for i := len(r.ms) - 1; i >= 0; i-- {
		m := &r.ms[i]
		if !m.taken && m.ke-m.ks == len(k) && string(r.key(m)) == k {
			if !ok {
				v, ok = r.val(m), true
			}
			m.taken = true
		}
	}
	return v, ok
}

// Has reports whether k is a member not taken yet.
func (r *Reader) Has(k string) bool {
	for i := range r.ms {
		if !r.ms[i].taken && string(r.key(&r.ms[i])) == k {
			return true
		}
	}
	return false
}

// IsNull reports whether v is the JSON null.
func IsNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

// Str reads a string member; required means absent or null is a problem.
func (r *Reader) Str(k string, required bool) string {
	v, ok := r.quoted(k, required)
	if !ok {
		return ""
	}
	return Unquote(v)
}

// quoted takes string member k as it stands, quotes included; ok is false
// when it is absent or null (a problem if required) or not a string (a
// problem).
func (r *Reader) quoted(k string, required bool) (v []byte, ok bool) {
	v, ok = r.Take(k)
	if !ok || IsNull(v) {
		if required {
			r.Fail(k, "is required")
		}
		return nil, false
	}
	if v[0] != '"' {
		r.Fail(k, "must be a string, got %s", Kind(v))
		return nil, false
	}
	return v, true
}

// Names maps the JSON names a decoder expects often (types, roles) to
// themselves, so that Name returns them without an allocation.
type Names map[string]string

// NewNames returns the Names of names.
func NewNames(names ...string) Names {
	m := make(Names, len(names))
	for _, s := range names {
		m[s] = s
	}
	return m
}

// Name reads a string member like Str; a value among names comes back
// without an allocation.
func (r *Reader) Name(k string, required bool, names Names) string {
	v, ok := r.quoted(k, required)
	if !ok {
		return ""
	}
	if s, ok := names[string(v[1:len(v)-1])]; ok {
		return s
	}
	return Unquote(v)
}

// PlainString decodes v if it is a JSON string of printable ASCII with no
// escapes, the common case; ok is false for anything else.
func PlainString(v []byte) (s string, ok bool) {
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

// NullableStr reads a member that must be present and is a string or null.
func (r *Reader) NullableStr(k string) *string {
	v, ok := r.Take(k)
	if !ok {
		r.Fail(k, "is required (null is allowed)")
		return nil
	}
	if IsNull(v) {
		return nil
	}
	if v[0] != '"' {
		r.Fail(k, "must be a string or null, got %s", Kind(v))
		return nil
	}
	s := Unquote(v)
	return &s
}

// Bool reads a boolean member.
func (r *Reader) Bool(k string, required bool) bool {
	v, ok := r.Take(k)
	if !ok || IsNull(v) {
		if required {
			r.Fail(k, "is required")
		}
		return false
	}
	switch string(v) {
	case "true":
		return true
	case "false":
		return false
	}
	r.Fail(k, "must be a boolean, got %s", Kind(v))
	return false
}

// Int64 reads an integer member (integral numbers in exponent form, such as
// 1.7e12, included).
func (r *Reader) Int64(k string, required bool) int64 {
	v, ok := r.Take(k)
	if !ok || IsNull(v) {
		if required {
			r.Fail(k, "is required")
		}
		return 0
	}
	return r.intValue(k, v)
}

// intValue decodes v, the value of k, as an integer.
func (r *Reader) intValue(k string, v []byte) int64 {
	if n, ok := parseInt(v); ok {
		return n
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		// Accept integral floats such as 1.7e12 written by JavaScript.
		f, ok := number(v)
		if !ok || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
			r.Fail(k, "%s", intProblem(v, f, ok))
			return 0
		}
		n = int64(f)
	}
	return n
}

// IntPtr reads an optional integer member: nil if absent or null.
func (r *Reader) IntPtr(k string) *int64 {
	v, ok := r.Take(k)
	if !ok || IsNull(v) {
		return nil
	}
	n := r.intValue(k, v)
	return &n
}

// Strings reads an array of strings; a null element is "".
func (r *Reader) Strings(k string, required bool) []string {
	v, ok := r.Take(k)
	if !ok || IsNull(v) {
		if required {
			r.Fail(k, "is required")
		}
		return nil
	}
	if v[0] != '[' {
		r.Fail(k, "must be an array of strings, got %s", Kind(v))
		return []string{}
	}
	s := make([]string, countElements(v, r.path.ix))
	_ = forElements(v, r.path.ix, func(i int, e []byte) error { // the callback never fails
		switch e[0] {
		case '"':
			s[i] = Unquote(e)
		case 'n': // null: ""
		default:
			r.SetErr(fieldErr(r.path.Key(k).Elem(i).String(), "must be a string, got %s", Kind(e)))
		}
		return nil
	})
	return s
}

// Raw reads any JSON value, compacted; required means it must be present and
// not null.
func (r *Reader) Raw(k string, required bool) json.RawMessage {
	v, ok := r.Take(k)
	if !ok || IsNull(v) {
		if required {
			r.Fail(k, "is required")
		}
		return nil
	}
	return compactValid(v)
}

// Object reads a member that is not null and decodes it with dec, which gets
// the value's span (already valid JSON) and its path; dec's error becomes
// r's problem. It reports whether the member was there.
func (r *Reader) Object(k string, required bool, dec func([]byte, Path) error) bool {
	v, ok := r.Take(k)
	if !ok || IsNull(v) {
		if required {
			r.Fail(k, "is required")
		}
		return false
	}
	if err := dec(v, r.path.Key(k)); err != nil && r.err == nil {
		r.err = err
	}
	return true
}

// Rest returns the members nobody took, compacted; nil if none.
func (r *Reader) Rest() map[string]json.RawMessage {
	n := 0
	for i := range r.ms {
		if !r.ms[i].taken {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	x := make(map[string]json.RawMessage, n)
	for i := range r.ms {
		if m := &r.ms[i]; !m.taken {
			x[string(r.key(m))] = compactValid(r.val(m)) // a later duplicate wins
		}
	}
	return x
}

// Members returns the members not taken yet as a map, as encoding/json
// decodes an object into map[string]json.RawMessage (copies; the last of
// duplicate keys wins).
func (r *Reader) Members() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(r.ms))
	for i := range r.ms {
		if mb := &r.ms[i]; !mb.taken {
			m[string(r.key(mb))] = slices.Clone(r.val(mb))
		}
	}
	return m
}

// Float reads an optional number member.
func (r *Reader) Float(k string) float64 {
	v, ok := r.Take(k)
	if !ok || IsNull(v) {
		return 0
	}
	f, ok := number(v)
	switch {
	case !ok && Kind(v) == "a number":
		r.Fail(k, "must be a number between -1.8e308 and 1.8e308, got %s", describeValue(v))
	case !ok:
		r.Fail(k, "must be a number, got %s", Kind(v))
	}
	return f
}

// intProblem says why v, a valid JSON value, is not an int64; f and ok are
// what number made of it.
func intProblem(v []byte, f float64, ok bool) string {
	switch {
	case Kind(v) != "a number":
		return "must be an integer, got " + Kind(v)
	case !ok || f == math.Trunc(f):
		return "must be an integer between -9223372036854775808 and 9223372036854775807, got " + describeValue(v)
	}
	return "must be an integer, got " + describeValue(v)
}

// number decodes v, a valid JSON value, if it is a number a float64 holds
// (not beyond ±1.8e308).
func number(v []byte) (float64, bool) {
	if c := v[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// describeValue names v, a valid JSON value, in errors: a number as it is
// written (up to 40 bytes), else its kind.
func describeValue(v []byte) string {
	if Kind(v) != "a number" {
		return Kind(v)
	}
	if len(v) > 40 {
		return string(v[:40]) + "..."
	}
	return string(v)
}
