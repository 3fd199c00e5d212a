package events

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The span scanner's pieces agree with encoding/json: validJSON with
// json.Valid, unquote with decoding a string, compactValid with
// json.Compact, and split and forElements find the members and elements
// encoding/json finds.

var scanSeeds = []string{
	``, ` `, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e5`, `1E+5`, `1e`, `.5`, `+1`, `1.5e-3`, `true`, `tru`, `truex`, `null`, `nul`, `false`,
	`""`, `"a`, `"\u00e9"`, `"\u00G0"`, `"\x"`, `"\/\b\f\n\r\t\"\\"`, "\"\x01\"", "\"\x7f\xff\"", `"\ud800\udc00"`, `"\ud800"`, `"\udc00\ud800"`,
	`{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{"a" : [1, {"b":null}] , "c":"}"}`, `{1:2}`, `{"a"}`, `{"a":}`, `[`, `[]`, `[1,]`, `[1 2]`, `[,1]`,
	`{}{}`, `{} x`, " \t\r\n[1]\n", "\v[1]", "{ \"<\" : [ \"a&b\\\\<\" , \"\u2028\u2029\xe2\x80\" ] }", `[1]]`, `{"a":1}}`, `{"a":[}`, `["\\"]`, `["\\\""]`,
}

// validJSON is what index.build decides.
func validJSON(data []byte) bool {
	var ix index
	return ix.build(data)
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", data, got, want)
		}
	})
}

func TestValidJSONDepth(t *testing.T) {
	for _, n := range []int{9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`} {
			close := "]"
			if open != "[" {
				close = "}"
			}
			data := []byte(strings.Repeat(open, n) + "1" + strings.Repeat(close, n))
			if got, want := validJSON(data), json.Valid(data); got != want {
				t.Errorf("depth %d of %s: validJSON = %v, json.Valid = %v", n, open, got, want)
			}
		}
	}
}

// FuzzScan checks, for any valid JSON value, unquote against encoding/json
// on every string in it, compactValid against json.Compact, and the members
// split finds against a decode into map[string]json.RawMessage.
func FuzzScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		v := trimSpace(data)
		var want bytes.Buffer
		if err := json.Compact(&want, v); err != nil {
			t.Fatal(err)
		}
		if got := compactValid(v); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("compactValid(%q) = %q, json.Compact gives %q", v, got, want.Bytes())
		}
		wantM, err := json.Marshal(json.RawMessage(v))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendMarshalled(nil, v); !bytes.Equal(got, wantM) {
			t.Fatalf("appendMarshalled(%q) = %q, json.Marshal gives %q", v, got, wantM)
		}
		checkSpans(t, v, nil)
		ix := indexJSON(data)
		defer ix.release()
		checkSpans(t, v, ix)
	})
}

// checkSpans checks v, valid JSON, and every value in it; ix, if not nil,
// is the index of the document v is a span of.
func checkSpans(t *testing.T, v []byte, ix *index) {
	t.Helper()
	if end := valueEnd(v, 0, ix); end != len(v) {
		t.Fatalf("valueEnd(%q) = %d, want %d", v, end, len(v))
	}
	switch v[0] {
	case '"':
		var want string
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		if got := unquote(v); got != want {
			t.Fatalf("unquote(%q) = %q, encoding/json gives %q", v, got, want)
		}
	case '[':
		var want []json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		if n := countElements(v, ix); n != len(want) {
			t.Fatalf("countElements(%q) = %d, want %d", v, n, len(want))
		}
		_ = forElements(v, ix, func(i int, e []byte) error { // the callback fails the test itself
			if !bytes.Equal(e, want[i]) {
				t.Fatalf("element %d of %q is %q, want %q", i, v, e, want[i])
			}
			checkSpans(t, e, ix)
			return nil
		})
	case '{':
		var want map[string]json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		r := objReader{data: v, path: path{ix: ix}}
		r.ms = r.split(nil)
		got := map[string]json.RawMessage{}
		for i := range r.ms {
			m := &r.ms[i]
			got[string(r.key(m))] = r.val(m)
			checkSpans(t, r.val(m), ix)
		}
		if len(got) != len(want) {
			t.Fatalf("split(%q) finds keys %q, want %q", v, keys(got), keys(want))
		}
		for k, w := range want {
			if !bytes.Equal(got[k], w) {
				t.Fatalf("split(%q): member %q is %q, want %q", v, k, got[k], w)
			}
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestScanSeeds(t *testing.T) {
	for _, s := range append(scanSeeds, trickyInputs...) {
		data := []byte(s)
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid = %v", data, got, want)
		}
		if json.Valid(data) {
			checkSpans(t, trimSpace(data), nil)
			ix := indexJSON(data)
			checkSpans(t, trimSpace(data), ix)
			ix.release()
		}
	}
}

func TestPathString(t *testing.T) {
	for _, c := range []struct {
		p    path
		want string
	}{
		{path{}, ""},
		{path{}.key("a"), "a"},
		{path{}.index(1).key("mimeType"), "[1].mimeType"},
		{path{}.key("message").key("content").index(2).key("type"), "message.content[2].type"},
		{path{}.key("a").index(1).key("b").index(2).key("c").index(3).key("d"), "a[1].b[2].c[3].d"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("path = %q, want %q", got, c.want)
		}
	}
}

// Strings of every length around stringEnd's switch from a plain loop to
// IndexByte, with escaped quotes and backslashes at every position.
func TestStringEndLengths(t *testing.T) {
	for n := range 80 {
		for _, esc := range []string{`\"`, `\\`, `\\\"`, `\u0022`, `"`} {
			for at := 0; at <= n; at += 7 {
				s := strings.Repeat("a", at) + esc + strings.Repeat("b", n-at)
				v := []byte(`["` + s + `","x"]`)
				if !json.Valid(v) {
					continue // a bare quote
				}
				checkSpans(t, v, nil)
				ix := indexJSON(v)
				checkSpans(t, v, ix)
				ix.release()
			}
		}
	}
}

// The word-at-a-time tests find a byte at any position of the word, next to
// any other byte.
func TestWordTests(t *testing.T) {
	for pos := range 8 {
		for b := range 256 {
			for _, fill := range []byte{'a', 0x7f, 0xff, 0x00, 0x1f, 0x20} {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[pos] = byte(b)
				x := uint64(0)
				for i := 7; i >= 0; i-- {
					x = x<<8 | uint64(w[i])
				}
				anyLess, anyQuote, anyHigh := false, false, false
				for _, c := range w {
					anyLess = anyLess || c < 0x20
					anyQuote = anyQuote || c == '"'
					anyHigh = anyHigh || c >= 0x80
				}
				if got := hasLess(x, 0x20) != 0; got != anyLess {
					t.Fatalf("hasLess(% x, 0x20) = %v", w, got)
				}
				if got := hasByte(x, '"') != 0; got != anyQuote {
					t.Fatalf("hasByte(% x, '\"') = %v", w, got)
				}
				if got := x&msbs != 0; got != anyHigh {
					t.Fatalf("high bit of % x = %v", w, got)
				}
			}
		}
	}
}
