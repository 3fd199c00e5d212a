package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// The envelopes Cairn alone writes (Command, Event, ToolCall, ToolResult)
// are plain structs with json tags, decoded by DecodeKnown with
// encoding/json: reflection is the library's, not ours.

// jsonNames returns the JSON names of the fields of struct type t.
func jsonNames(t reflect.Type) map[string]bool {
	if v, ok := jsonNamesCache.Load(t); ok {
		return v.(map[string]bool)
	}
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
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

// DecodeKnown decodes into v, a pointer to a struct with json tags, the
// members of r whose keys are exactly the JSON names of v's fields, and
// takes them out of r. encoding/json alone would also match keys that
// differ in case, so an unknown member "ID" could overwrite "id". The
// members go to encoding/json as one object, in key order, the last of
// duplicate keys only, written as json.Marshal writes them (raw fields
// get their values compacted, with <, > and & escaped).
func (r *Reader) DecodeKnown(v any) error {
	names := jsonNames(reflect.TypeOf(v).Elem())
	type kv struct{ key, val []byte }
	var buf [16]kv
	sub := buf[:0]
	size := 2
	for i := range r.ms {
		m := &r.ms[i]
		key := r.key(m)
		if m.taken || !names[string(key)] {
			continue
		}
		m.taken = true
		val := r.val(m)
		if j := slices.IndexFunc(sub, func(s kv) bool { return bytes.Equal(s.key, key) }); j >= 0 {
			sub[j].val = val // the last wins
			continue
		}
		sub = append(sub, kv{key, val})
		size += len(key) + len(val) + 4
	}
	if len(sub) == 0 {
		return nil
	}
	slices.SortFunc(sub, func(a, b kv) int { return bytes.Compare(a.key, b.key) })
	data := make([]byte, 0, size)
	data = append(data, '{')
	for i, m := range sub {
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, '"') // a field name: plain ASCII
		data = append(data, m.key...)
		data = append(data, '"', ':')
		data = appendMarshalled(data, m.val)
	}
	data = append(data, '}')
	if err := json.Unmarshal(data, v); err != nil {
		return prefixed(r.path.String(), describeDecodeErr(err))
	}
	return nil
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
