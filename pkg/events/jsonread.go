package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
)

// objReader takes the fields of one JSON object out one by one; what is left
// at the end is the object's Extra. The first problem is kept in err, named
// with path.
//
// The object is split once into the spans of its members (see jsonscan.go);
// nested objects are read from their spans without being checked again: only
// the entry points (DecodeEntry, UnmarshalJSON, ...) validate, once, with
// readObject or indexObject. A key that appears twice counts once, with its
// last value, as with encoding/json into a map. Nothing a reader returns
// aliases the input: strings, raw values and Extra are copies. Error paths
// go through encoding/json, so errors are worded as they always were.
type objReader struct {
	data []byte   // the object
	keys []byte   // keys that had escapes, decoded
	ms   []member // data's members
	path path
	err  error
	lo   int  // where ms starts in path.ix.members
	own  bool // path.ix is this reader's to release
}

// readObject reads data, which must be valid JSON, all of it, holding an
// object. Call release when done.
func readObject(data []byte) (objReader, error) {
	ix := indexJSON(data)
	if ix == nil {
		return objReader{}, notObject(data, "")
	}
	r, err := readValidObject(data, path{ix: ix})
	if err != nil {
		ix.release()
		return r, err
	}
	r.own = true
	return r, nil
}

// readValidObject reads data, which must be a span of input readObject
// checked, holding an object. Call release when done.
func readValidObject(data []byte, p path) (objReader, error) {
	data = trimSpace(data)
	if data[0] != '{' {
		return objReader{}, notObject(data, p.String())
	}
	r := objReader{data: data, path: p}
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

// release hands r's members back for reuse; r must not be used after.
func (r *objReader) release() {
	if ix := r.path.ix; ix != nil && r.data != nil {
		ix.members = ix.members[:r.lo]
	}
	if r.own {
		r.path.ix.release()
		r.own = false
	}
	r.data, r.ms = nil, nil
}

// notObject is the error for data that is not a JSON object, worded by
// encoding/json as it always was.
func notObject(data []byte, path string) error {
	var m map[string]json.RawMessage
	err := json.Unmarshal(data, &m)
	return &FieldError{Field: path, Problem: "must be a JSON object: " + describeJSONErr(err, data)}
}

// indexObject validates data, all of it, and returns its index for a
// decoder that reads it with readValidObject. Release the index after.
func indexObject(data []byte) (*index, error) {
	ix := indexJSON(data)
	if ix == nil {
		return nil, notObject(data, "")
	}
	return ix, nil
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

// field returns the name of member k in errors.
func (r *objReader) field(k string) string { return r.path.key(k).String() }

func (r *objReader) fail(k, format string, args ...any) {
	if r.err == nil {
		r.err = fieldErr(r.field(k), format, args...)
	}
}

// key returns m's key, decoded.
func (r *objReader) key(m *member) []byte {
	if m.esc {
		return r.keys[m.ks:m.ke]
	}
	return r.data[m.ks:m.ke]
}

// val returns m's value as it appears in the input.
func (r *objReader) val(m *member) []byte { return r.data[m.vs:m.ve] }

// take returns the value of k, the last one if k appears more than once, and
// takes every member named k out of the object.
func (r *objReader) take(k string) (v []byte, ok bool) {
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

// has reports whether k is a member not taken yet.
func (r *objReader) has(k string) bool {
	for i := range r.ms {
		if !r.ms[i].taken && string(r.key(&r.ms[i])) == k {
			return true
		}
	}
	return false
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
	if v[0] != '"' {
		r.fail(k, "must be a string, got %s", jsonKind(v))
		return ""
	}
	return unquote(v)
}

// name reads a string field that usually holds one of the package's names
// (a type, a role, a stop reason); those come back without an allocation.
func (r *objReader) name(k string, required bool) string {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return ""
	}
	if v[0] != '"' {
		r.fail(k, "must be a string, got %s", jsonKind(v))
		return ""
	}
	if s, ok := knownName(v[1 : len(v)-1]); ok {
		return s
	}
	return unquote(v)
}

// knownNames holds the names name returns without allocating.
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		EntrySession, EntryMessage, EntryModelChange, EntryThinkingLevelChange, EntryActiveToolsChange,
		EntryCompaction, EntryBranchSummary, EntryLabel, EntryCustom, EntryCustomMessage, EntrySessionInfo,
		EntryLeaf, EntryTurnInterrupted, EntryCommandRejected,
		RoleUser, RoleAssistant, RoleToolResult, RoleCustom, RoleBranchSummary, RoleCompactionSummary, RoleBashExecution,
		BlockText, BlockImage, BlockThinking, BlockToolCall,
		string(StopEnd), string(StopLength), string(StopToolUse), string(StopError), string(StopAborted),
	} {
		m[s] = s
	}
	return m
}()

// knownName returns the name whose JSON string, between its quotes, is raw.
func knownName(raw []byte) (string, bool) {
	s, ok := knownNames[string(raw)]
	return s, ok
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
	if v[0] != '"' {
		r.fail(k, "must be a string or null, got %s", jsonKind(v))
		return nil
	}
	s := unquote(v)
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
	switch string(v) {
	case "true":
		return true
	case "false":
		return false
	}
	r.fail(k, "must be a boolean, got %s", jsonKind(v))
	return false
}

func (r *objReader) int64(k string, required bool) int64 {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return 0
	}
	return r.intValue(k, v)
}

// intValue decodes v, the value of k, as an integer.
func (r *objReader) intValue(k string, v []byte) int64 {
	if n, ok := parseInt(v); ok {
		return n
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
	v, ok := r.take(k)
	if !ok || isNull(v) {
		return nil
	}
	n := r.intValue(k, v)
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
	if s, ok := plainStrings(v); ok {
		return s
	}
	// Anything but an array of strings: encoding/json decides (a null
	// element is "") and words the error.
	var s []string
	if err := json.Unmarshal(v, &s); err != nil {
		r.fail(k, "must be an array of strings, got %s", jsonKind(v))
	}
	if s == nil {
		s = []string{}
	}
	return s
}

// plainStrings decodes v if it is an array whose elements are all strings.
func plainStrings(v []byte) ([]string, bool) {
	if v[0] != '[' {
		return nil, false
	}
	s := make([]string, 0, countElements(v, nil))
	err := forElements(v, nil, func(_ int, e []byte) error {
		if e[0] != '"' {
			return errNotString
		}
		s = append(s, unquote(e))
		return nil
	})
	return s, err == nil
}

var errNotString = errors.New("not a string")

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
	return compactValid(v)
}

// object reads a field that must hold a JSON object and decodes it with dec,
// which gets the value's span (already valid JSON).
func (r *objReader) object(k string, required bool, dec func([]byte, path) error) bool {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		if required {
			r.fail(k, "is required")
		}
		return false
	}
	if err := dec(v, r.path.key(k)); err != nil && r.err == nil {
		r.err = err
	}
	return true
}

// rest returns the fields nobody took, compacted; nil if none.
func (r *objReader) rest() Extra {
	n := 0
	for i := range r.ms {
		if !r.ms[i].taken {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	x := make(Extra, n)
	for i := range r.ms {
		if m := &r.ms[i]; !m.taken {
			x[string(r.key(m))] = compactValid(r.val(m)) // a later duplicate wins
		}
	}
	return x
}

// members returns the members not taken yet as a map, as encoding/json
// decodes an object into map[string]json.RawMessage (copies; the last of
// duplicate keys wins).
func (r *objReader) members() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(r.ms))
	for i := range r.ms {
		if mb := &r.ms[i]; !mb.taken {
			m[string(r.key(mb))] = slices.Clone(r.val(mb))
		}
	}
	return m
}

// message reads a field holding one message; absent or null gives nil.
func (r *objReader) message(k string, required bool) *Message {
	var m *Message
	r.object(k, required, func(b []byte, p path) error {
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
	if v[0] != '[' {
		r.fail(k, "must be an array of messages, got %s", jsonKind(v))
		return nil
	}
	msgs := make([]Message, countElements(v, r.path.ix))
	err := forElements(v, r.path.ix, func(i int, e []byte) error {
		return msgs[i].decode(e, r.path.key(k).index(i))
	})
	if err != nil {
		if r.err == nil {
			r.err = err
		}
		return nil
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
	if v[0] != '[' {
		r.fail(k, "must be an array of content blocks, got %s", jsonKind(v))
		return nil
	}
	blocks := make([]Block, countElements(v, r.path.ix))
	err := forElements(v, r.path.ix, func(i int, e []byte) error {
		return blocks[i].decode(e, r.path.key(k).index(i))
	})
	if err != nil {
		if r.err == nil {
			r.err = err
		}
		return nil
	}
	return blocks
}

// float reads an optional number field.
func (r *objReader) float(k string) float64 {
	v, ok := r.take(k)
	if !ok || isNull(v) {
		return 0
	}
	if c := v[0]; c == '-' || c >= '0' && c <= '9' { // a JSON number
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return f // what encoding/json gives
		}
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		r.fail(k, "must be a number, got %s", jsonKind(v))
	}
	return f
}
