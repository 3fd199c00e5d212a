package jsonx

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Check says where a document stops being JSON (the offset of the first
// byte that cannot be there, 0-based) and why, in the words the package doc
// gives.
func TestCheckErrors(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	for _, c := range []struct{ in, want string }{
		{``, "at offset 0: want a value, got the end of the input"},
		{`   `, "at offset 3: want a value, got the end of the input"},
		{`{`, "at offset 1: want a string (a member's key), got the end of the input"},
		{`{"a"`, "at offset 4: want ':' after a member's key, got the end of the input"},
		{`{"a" 1}`, "at offset 5: want ':' after a member's key, got '1'"},
		{`{"a":}`, "at offset 5: want a value, got '}'"},
		{`{"a":1,}`, "at offset 7: want a string (a member's key), got '}'"},
		{`{1:2}`, "at offset 1: want a string (a member's key), got '1'"},
		{`[1,]`, "at offset 3: want a value, got ']'"},
		{`[1 2]`, "at offset 3: want ',' or ']', got '2'"},
		{`{"a":1]`, "at offset 6: want ',' or '}', got ']'"},
		{`{} x`, "at offset 3: want the end of the input after the value, got 'x'"},
		{"\v{}", "at offset 0: want a value, got byte 0x0b"},
		{"{}\xff", "at offset 2: want the end of the input after the value, got byte 0xff"},
		{`"abc`, "at offset 4: the input ends inside a string"},
		{`"a\`, "at offset 3: the input ends inside a string"},
		{"\"a\x01\"", "at offset 2: control character U+0001 in a string (write it escaped)"},
		{`"\q"`, `at offset 1: invalid escape in a string: \ followed by 'q'`},
		{`"\u12G4"`, `at offset 1: invalid escape in a string: want four hex digits after \u`},
		{`"\u12"`, `at offset 1: invalid escape in a string: want four hex digits after \u`},
		{`-`, "at offset 1: want a digit in a number, got the end of the input"},
		{`-x`, "at offset 1: want a digit in a number, got 'x'"},
		{`01`, "at offset 1: want the end of the input after the value, got '1'"},
		{`1.`, "at offset 2: want a digit after the decimal point, got the end of the input"},
		{`1.e5`, "at offset 2: want a digit after the decimal point, got 'e'"},
		{`1e+`, "at offset 3: want a digit in the exponent, got the end of the input"},
		{`tru`, "at offset 3: want true, got the end of the input"},
		{`nul1`, "at offset 3: want null, got '1'"},
		{`fals e`, "at offset 4: want false, got byte 0x20"},
		{`x`, "at offset 0: want a value, got 'x'"},
		{deep, "at offset 10000: more than 10000 nested arrays and objects"},
	} {
		ix, err := Check([]byte(c.in))
		var e *Error
		if ix != nil || !errors.As(err, &e) || e.Field != "" || e.Problem != "invalid JSON "+c.want {
			t.Errorf("Check(%.20q) = %v, want %q", c.in, err, "invalid JSON "+c.want)
		}
	}
}

// A reader names the member that is wrong, with its path, and says what it
// must be and what it got.
func TestReaderErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		read func(r *Reader)
		want string
	}{
		{`{}`, func(r *Reader) { r.Str("a", true) }, "a: is required"},
		{`{"a":null}`, func(r *Reader) { r.Str("a", true) }, "a: is required"},
		{`{"a":1}`, func(r *Reader) { r.Str("a", false) }, "a: must be a string, got a number"},
		{`{}`, func(r *Reader) { r.NullableStr("a") }, "a: is required (null is allowed)"},
		{`{"a":[]}`, func(r *Reader) { r.NullableStr("a") }, "a: must be a string or null, got an array"},
		{`{"a":"true"}`, func(r *Reader) { r.Bool("a", false) }, "a: must be a boolean, got a string"},
		{`{"a":1.5}`, func(r *Reader) { r.Int64("a", false) }, "a: must be an integer, got 1.5"},
		{`{"a":1e19}`, func(r *Reader) { r.Int64("a", false) }, "a: must be an integer between -9223372036854775808 and 9223372036854775807, got 1e19"},
		{`{"a":"1"}`, func(r *Reader) { r.IntPtr("a") }, "a: must be an integer, got a string"},
		{`{"a":1e400}`, func(r *Reader) { r.Float("a") }, "a: must be a number between -1.8e308 and 1.8e308, got 1e400"},
		{`{"a":{}}`, func(r *Reader) { r.Float("a") }, "a: must be a number, got an object"},
		{`{"a":"x"}`, func(r *Reader) { r.Strings("a", false) }, "a: must be an array of strings, got a string"},
		{`{"a":["x",null,true]}`, func(r *Reader) { r.Strings("a", false) }, "a[2]: must be a string, got a boolean"},
		{`{"a":{"b":[{"c":5}]}}`, func(r *Reader) {
			r.Object("a", true, func(b []byte, p Path) error {
				inner, err := ReadValidObject(b, p)
				if err != nil {
					return err
				}
				defer inner.Release()
				v, _ := inner.Take("b")
				return Elements(TrimSpace(v), p.Key("b"), func(i int, e []byte, p Path) error {
					el, err := ReadValidObject(e, p)
					if err != nil {
						return err
					}
					el.Str("c", true)
					defer el.Release()
					return el.Err()
				})
			})
		}, "a.b[0].c: must be a string, got a number"},
		{`{"a":[1]}`, func(r *Reader) {
			r.Object("a", true, func(b []byte, p Path) error {
				_, err := ReadValidObject(b, p)
				return err
			})
		}, "a: must be a JSON object, got an array"},
	} {
		r, err := ReadObject([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		c.read(&r)
		if err := r.Err(); err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
		r.Release()
	}
}

type testInner struct {
	N    int    `json:"n"`
	Name string `json:"name"`
}

// testEnvelope has a field of every kind the envelopes of pkg/events have.
type testEnvelope struct {
	S    string          `json:"s"`
	B    bool            `json:"b"`
	I8   int8            `json:"i8"`
	I    int64           `json:"i"`
	U    uint64          `json:"u"`
	P    *string         `json:"p"`
	L    []string        `json:"l"`
	In   *testInner      `json:"in"`
	Ins  []testInner     `json:"ins"`
	Raw  json.RawMessage `json:"raw"`
	Skip string          `json:"-"`
}

// The envelope decoder leaves deciding to encoding/json and says in its own
// words which member it refused and why.
func TestDecodeKnownErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"s":1}`, "s: must be a string, got a number"},
		{`{"b":"yes"}`, "b: must be a boolean, got a string"},
		{`{"i8":128}`, "i8: must be an integer between -128 and 127, got 128"},
		{`{"i8":1.0}`, "i8: must be an integer, got 1.0"},
		{`{"u":-1}`, "u: must be an integer between 0 and 18446744073709551615, got -1"},
		{`{"u":true}`, "u: must be an integer, got a boolean"},
		{`{"p":[]}`, "p: must be a string, got an array"},
		{`{"l":"a"}`, "l: must be an array of strings, got a string"},
		{`{"l":["a",null,2]}`, "l[2]: must be a string, got a number"},
		{`{"in":[]}`, "in: must be an object, got an array"},
		{`{"in":{"N":"1"}}`, "in.N: must be an integer, got a string"}, // nested keys match in any case, as encoding/json matches them
		{`{"ins":[{"n":1},{"name":false}]}`, "ins[1].name: must be a string, got a boolean"},
		{`{"s":"ok","u":1,"b":0}`, "b: must be a boolean, got a number"}, // the first wrong member in key order
	} {
		r, err := ReadObject([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		var v testEnvelope
		if err := r.DecodeKnown(&v); err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
		r.Release()
	}
}

// FuzzDecodeKnown checks that explain knows encoding/json's rules for the
// kinds of fields envelopes have: when the library refuses an object,
// explain finds the member and says why; when it accepts, explain finds
// nothing wrong with any member.
func FuzzDecodeKnown(f *testing.F) {
	for _, s := range []string{`{"s":1}`, `{"i8":128,"u":-1}`, `{"in":{"N":"1"}}`, `{"ins":[{"n":1},{"name":false}]}`,
		`{"l":["a",null,2]}`, `{"p":null,"raw":{"a":[1]},"Skip":"x","S":"y"}`, `{"i":1e2,"b":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ReadObject(data)
		if err != nil {
			return
		}
		defer r.Release()
		var v testEnvelope
		err = r.DecodeKnown(&v)
		if err != nil && strings.Contains(err.Error(), "is not a valid") {
			t.Fatalf("%s: encoding/json refused it for a reason explain does not know: %v", data, err)
		}
		if err != nil {
			return
		}
		typ := reflect.TypeFor[testEnvelope]()
		last := map[string][]byte{} // the value of each key DecodeKnown decoded
		for i := range r.ms {
			last[string(r.key(&r.ms[i]))] = r.val(&r.ms[i])
		}
		for k, val := range last {
			if fd, ok := fieldByName(typ, []byte(k), true); ok {
				if err := explain(fd.Type, val, Path{}.Key(k)); err != nil {
					t.Fatalf("%s: encoding/json accepted it, explain says %v", data, err)
				}
			}
		}
	})
}
