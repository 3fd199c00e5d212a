package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
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
		if name, ok := jsonName(t.Field(i)); ok {
			names[name] = true
		}
	}
	jsonNamesCache.Store(t, names)
	return names
}

var jsonNamesCache sync.Map // reflect.Type -> map[string]bool

// jsonName is the JSON name of struct field f; ok is false for a field
// encoding/json leaves out (unexported, or tagged "-").
func jsonName(f reflect.StructField) (name string, ok bool) {
	name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || !f.IsExported() {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}

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
	if json.Unmarshal(data, v) == nil {
		return nil
	}
	// encoding/json refused a member; find it and say why, in our words.
	t := reflect.TypeOf(v).Elem()
	for _, m := range sub {
		f, _ := fieldByName(t, m.key, true)
		if err := explain(f.Type, TrimSpace(m.val), r.path.Key(string(m.key))); err != nil {
			return err
		}
	}
	return fieldErr(r.path.String(), "is not a valid %s", t.Name()) // not found: never seen
}

// explain returns why encoding/json refuses to decode v, a valid JSON value
// named p, into a value of type t, or nil if it would not. It follows the
// library's rules for the types envelopes hold: null leaves any value as it
// is; integers must be written as integers and fit; an object's members
// match fields by name, exactly or else in any case; other members are
// ignored.
func explain(t reflect.Type, v []byte, p Path) error {
	if string(v) == "null" {
		return nil
	}
	kind := Kind(v)
	switch t.Kind() {
	case reflect.Pointer:
		return explain(t.Elem(), v, p)
	case reflect.String:
		if kind != "a string" {
			return fieldErr(p.String(), "must be a string, got %s", kind)
		}
	case reflect.Bool:
		if kind != "a boolean" {
			return fieldErr(p.String(), "must be a boolean, got %s", kind)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, err := strconv.ParseInt(string(v), 10, t.Bits()); err != nil {
			return intErr(p, v, kind, err, -1<<(t.Bits()-1), 1<<(t.Bits()-1)-1)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if _, err := strconv.ParseUint(string(v), 10, t.Bits()); err != nil {
			if _, ierr := strconv.ParseInt(string(v), 10, 64); ierr == nil || errors.Is(ierr, strconv.ErrRange) {
				err = strconv.ErrRange // a negative integer
			}
			return intErr(p, v, kind, err, 0, 1<<t.Bits()-1)
		}
	case reflect.Float32, reflect.Float64:
		if _, err := strconv.ParseFloat(string(v), t.Bits()); err != nil {
			if kind != "a number" {
				return fieldErr(p.String(), "must be a number, got %s", kind)
			}
			return fieldErr(p.String(), "must be a number a %d-bit float holds, got %s", t.Bits(), describeValue(v))
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // raw JSON: anything goes
			return nil
		}
		if kind != "an array" {
			of := ""
			if t.Elem().Kind() == reflect.String {
				of = " of strings"
			}
			return fieldErr(p.String(), "must be an array%s, got %s", of, kind)
		}
		return forElements(v, nil, func(i int, e []byte) error { return explain(t.Elem(), e, p.Elem(i)) })
	case reflect.Struct:
		if kind != "an object" {
			return fieldErr(p.String(), "must be an object, got %s", kind)
		}
		r := Reader{data: v}
		for _, m := range r.split(nil) {
			if f, ok := fieldByName(t, r.key(&m), false); ok {
				if err := explain(f.Type, r.val(&m), p.Key(string(r.key(&m)))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// intErr is the error for v, which is not an integer between lo and hi.
func intErr(p Path, v []byte, kind string, err error, lo int64, hi uint64) error {
	if kind != "a number" {
		return fieldErr(p.String(), "must be an integer, got %s", kind)
	}
	if errors.Is(err, strconv.ErrRange) {
		return fieldErr(p.String(), "must be an integer between %d and %d, got %s", lo, hi, describeValue(v))
	}
	return fieldErr(p.String(), "must be an integer, got %s", describeValue(v))
}

// fieldByName returns the field of struct type t that encoding/json decodes
// a member named key into: the one with that JSON name, or else, unless
// exact, the first whose JSON name matches it in any case.
func fieldByName(t reflect.Type, key []byte, exact bool) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		if name == string(key) {
			return f, true
		}
		if !exact && !found && strings.EqualFold(name, string(key)) {
			fold, found = f, true
		}
	}
	return fold, found
}
