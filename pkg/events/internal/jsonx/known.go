package jsonx

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// The envelopes Cairn alone writes (Command, Event, ToolCall, ToolResult)
// are plain structs with json tags, decoded by DecodeKnown: their members
// named exactly as a field go into it, typed as encoding/json types them.
// Members holding what a field's type plainly takes (a string for a
// string, a small integer for an int, ...) are set directly; the others go
// through encoding/json, which decides and words any error as it always
// did.

// fieldKind says how DecodeKnown sets a field without encoding/json.
type fieldKind uint8

const (
	kindJSON      fieldKind = iota // left to encoding/json
	kindString                     // a string kind
	kindInt                        // a signed integer kind
	kindUint                       // an unsigned integer kind
	kindBool                       // a bool
	kindRaw                        // json.RawMessage
	kindStringPtr                  // *string
	kindStrings                    // []string
)

// knownField is a field of a struct, by its JSON name.
type knownField struct {
	index int
	kind  fieldKind
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// knownFields returns the fields of struct type t by JSON name.
func knownFields(t reflect.Type) map[string]knownField {
	if v, ok := knownFieldsCache.Load(t); ok {
		return v.(map[string]knownField)
	}
	fields := make(map[string]knownField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		kind := fieldKindOf(f.Type)
		if strings.Contains(","+opts+",", ",string,") {
			kind = kindJSON
		}
		fields[name] = knownField{index: i, kind: kind}
	}
	knownFieldsCache.Store(t, fields)
	return fields
}

var knownFieldsCache sync.Map // reflect.Type -> map[string]knownField

func fieldKindOf(t reflect.Type) fieldKind {
	if t == rawMessageType {
		return kindRaw
	}
	if p := reflect.PointerTo(t); p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType) ||
		t.Implements(unmarshalerType) || t.Implements(textUnmarshalerType) {
		return kindJSON
	}
	switch t.Kind() {
	case reflect.String:
		return kindString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindUint
	case reflect.Bool:
		return kindBool
	case reflect.Pointer:
		if t.Elem() == reflect.TypeFor[string]() {
			return kindStringPtr
		}
	case reflect.Slice:
		if t == reflect.TypeFor[[]string]() {
			return kindStrings
		}
	}
	return kindJSON
}

// DecodeKnown decodes into v, a pointer to a struct with json tags, the members
// of r whose keys are exactly the JSON names of v's fields, and takes them out
// of r. encoding/json alone would also match keys that differ in case, so an
// unknown member "ID" could overwrite "id". Members it does not set itself go
// to encoding/json in key order, the last of duplicate keys only, written as
// json.Marshal wrote them into an object before, so its first type error is
// the one it always reported.
func (r *Reader) DecodeKnown(v any) error {
	sv := reflect.ValueOf(v).Elem()
	fields := knownFields(sv.Type())
	type kv struct {
		key, val []byte
		f        knownField
	}
	var buf [16]kv
	sub := buf[:0]
	for i := range r.ms {
		m := &r.ms[i]
		key := r.key(m)
		f, known := fields[string(key)]
		if m.taken || !known {
			continue
		}
		m.taken = true
		val := r.val(m)
		if j := slices.IndexFunc(sub, func(s kv) bool { return bytes.Equal(s.key, key) }); j >= 0 {
			sub[j].val = val // the last wins
			continue
		}
		sub = append(sub, kv{key, val, f})
	}
	rest := sub[:0]
	size := 2
	for _, m := range sub {
		if !setField(sv.Field(m.f.index), m.f.kind, m.val) {
			rest = append(rest, m)
			size += len(m.key) + len(m.val) + 4
		}
	}
	if len(rest) == 0 {
		return nil
	}
	slices.SortFunc(rest, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
	data := make([]byte, 0, size)
	data = append(data, '{')
	for i, m := range rest {
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, '"') // a field name: plain ASCII
		data = append(data, m.key...)
		data = append(data, '"', ':')
		data = appendMarshalled(data, m.val) // as json.Marshal wrote it into the map's JSON
	}
	data = append(data, '}')
	if err := json.Unmarshal(data, v); err != nil {
		return prefixed(r.path.String(), describeDecodeErr(err))
	}
	return nil
}

// setField sets f, of the given kind, to val, a JSON value, as encoding/json
// would; it reports false, leaving f alone, for anything it leaves to
// encoding/json (every value encoding/json would refuse among them).
func setField(f reflect.Value, kind fieldKind, val []byte) bool {
	null := string(val) == "null"
	switch kind {
	case kindString:
		if val[0] == '"' {
			f.SetString(Unquote(val))
			return true
		}
		return null // null leaves a string as it is
	case kindInt:
		if n, ok := parseInt(val); ok && !f.OverflowInt(n) {
			f.SetInt(n)
			return true
		}
		return null
	case kindUint:
		if n, ok := parseInt(val); ok && n >= 0 && val[0] != '-' && !f.OverflowUint(uint64(n)) {
			f.SetUint(uint64(n))
			return true
		}
		return null
	case kindBool:
		switch string(val) {
		case "true":
			f.SetBool(true)
			return true
		case "false":
			f.SetBool(false)
			return true
		}
		return null
	case kindRaw:
		f.SetBytes(appendMarshalled(nil, val)) // null included: RawMessage keeps it
		return true
	case kindStringPtr:
		if val[0] == '"' {
			s := Unquote(val)
			f.Set(reflect.ValueOf(&s))
			return true
		}
		if null {
			f.SetZero()
			return true
		}
	case kindStrings:
		if s, ok := plainStrings(val); ok {
			f.Set(reflect.ValueOf(s))
			return true
		}
		if null {
			f.SetZero()
			return true
		}
	}
	return false
}

func describeDecodeErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fieldErr(te.Field, "must be %s, got %s", jsonTypeName(te.Type.Kind().String()), te.Value)
	}
	return fieldErr("", "invalid JSON: %v", err)
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "a string or null"
	case "int", "int8", "int16", "int32", "int64":
		return "an integer"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "a non-negative integer"
	default:
		return "a number"
	}
}
