package jsonx

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The span scanner's pieces are checked against what RFC 8259 defines, with
// encoding/json as the reference there only (json.Valid for validity; on
// valid UTF-8, decoding into map[string]json.RawMessage for the members and
// json.Compact for the whitespace), and against the package doc for what
// RFC 8259 leaves open (invalid UTF-8, lone surrogates): refUnquote.

var scanSeeds = []string{
	``, ` `, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e5`, `1E+5`, `1e`, `.5`, `+1`, `1.5e-3`, `true`, `tru`, `truex`, `null`, `nul`, `false`,
	`""`, `"a`, `"\u00e9"`, `"\u00G0"`, `"\x"`, `"\/\b\f\n\r\t\"\\"`, "\"\x01\"", "\"\x7f\xff\"", `"\ud800\udc00"`, `"\ud800"`, `"\udc00\ud800"`,
	`{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{"a" : [1, {"b":null}] , "c":"}"}`, `{1:2}`, `{"a"}`, `{"a":}`, `[`, `[]`, `[1,]`, `[1 2]`, `[,1]`,
	`{}{}`, `{} x`, " \t\r\n[1]\n", "\v[1]", "{ \"<\" : [ \"a&b\\\\<\" , \"\u2028\u2029\xe2\x80\" ] }", `[1]]`, `{"a":1}}`, `{"a":[}`, `["\\"]`, `["\\\""]`,
}

// validJSON is what index.build decides.
func validJSON(data []byte) bool {
	var ix Index
	return ix.build(data)
}

// FuzzValidJSON: validity is RFC 8259's, which json.Valid decides too.
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

// A document may nest 10000 arrays and objects, not more.
func TestValidJSONDepth(t *testing.T) {
	for _, n := range []int{9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`} {
			close := "]"
			if open != "[" {
				close = "}"
			}
			data := []byte(strings.Repeat(open, n) + "1" + strings.Repeat(close, n))
			if got := validJSON(data); got != (n <= maxDepth) {
				t.Errorf("depth %d of %s: validJSON = %v", n, open, got)
			}
		}
	}
}

// FuzzScan checks, for any valid JSON value, Unquote on every string in it,
// compactValid, appendMarshalled, and the members and elements the scanner
// finds.
func FuzzScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		v := TrimSpace(data)
		if utf8.Valid(v) {
			var want bytes.Buffer
			if err := json.Compact(&want, v); err != nil {
				t.Fatal(err)
			}
			// compactValid also escapes U+2028 and U+2029 (line separators
			// to some readers, so an entry stays one line everywhere);
			// in valid JSON they can only be in strings.
			seps := strings.NewReplacer("\u2028", `\u2028`, "\u2029", `\u2029`)
			if got, w := compactValid(v), seps.Replace(want.String()); string(got) != w {
				t.Fatalf("compactValid(%q) = %q, json.Compact with the separators escaped gives %q", v, got, w)
			}
		}
		// In valid JSON, <, > and & and U+2028, U+2029 can only be in
		// strings, as themselves.
		escape := strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "\u2028", `\u2028`, "\u2029", `\u2029`)
		if got, want := appendMarshalled(nil, v), escape.Replace(string(compactValid(v))); string(got) != want {
			t.Fatalf("appendMarshalled(%q) = %q, want %q", v, got, want)
		}
		checkSpans(t, v, nil)
		ix := NewIndex(data)
		defer ix.Release()
		checkSpans(t, v, ix)
	})
}

// refUnquote decodes v, a valid JSON string with its quotes, as the package
// doc says, one rune at a time: escapes resolved, a \u escape of a lone
// surrogate and each byte of invalid UTF-8 replaced by U+FFFD.
func refUnquote(v []byte) string {
	s := v[1 : len(v)-1]
	var out []rune
	hex := func(i int) rune {
		n, _ := strconv.ParseUint(string(s[i:i+4]), 16, 32)
		return rune(n)
	}
	low := func(i int) bool { // a \u escape of a low surrogate at s[i:]
		return i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' && hex(i+2) >= 0xdc00 && hex(i+2) < 0xe000
	}
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			r, size := utf8.DecodeRune(s[i:])
			out = append(out, r) // RuneError for an invalid byte
			i += size
			continue
		}
		c := s[i+1]
		i += 2
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex(i)
			i += 4
			switch {
			case r >= 0xd800 && r < 0xdc00 && low(i):
				r = 0x10000 + (r-0xd800)<<10 + hex(i+2) - 0xdc00
				i += 6
			case r >= 0xd800 && r < 0xe000:
				r = utf8.RuneError
			}
			out = append(out, r)
		default: // " \ /
			out = append(out, rune(c))
		}
	}
	return string(out)
}

// checkSpans checks v, valid JSON, and every value in it; ix, if not nil,
// is the index of the document v is a span of.
func checkSpans(t *testing.T, v []byte, ix *Index) {
	t.Helper()
	if end := valueEnd(v, 0, ix); end != len(v) {
		t.Fatalf("valueEnd(%q) = %d, want %d", v, end, len(v))
	}
	rfc := utf8.Valid(v) // what RFC 8259 defines: encoding/json is a reference
	switch v[0] {
	case '"':
		if got, want := Unquote(v), refUnquote(v); got != want {
			t.Fatalf("Unquote(%q) = %q, want %q", v, got, want)
		}
		if rfc && !bytes.Contains(v, []byte(`\u`)) {
			var lib string
			if err := json.Unmarshal(v, &lib); err != nil || lib != Unquote(v) {
				t.Fatalf("Unquote(%q) = %q, encoding/json gives %q, %v", v, Unquote(v), lib, err)
			}
		}
	case '[':
		var got [][]byte
		_ = forElements(v, ix, func(i int, e []byte) error { // the callback fails the test itself
			got = append(got, e)
			checkSpans(t, e, ix)
			return nil
		})
		if n := countElements(v, ix); n != len(got) {
			t.Fatalf("countElements(%q) = %d, forElements finds %d", v, n, len(got))
		}
		if !rfc {
			return
		}
		var want []json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q has %d elements, want %d", v, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("element %d of %q is %q, want %q", i, v, got[i], want[i])
			}
		}
	case '{':
		r := Reader{data: v, path: Path{ix: ix}}
		r.ms = r.split(nil)
		got := map[string]json.RawMessage{}
		for i := range r.ms {
			m := &r.ms[i]
			got[string(r.key(m))] = r.val(m)
			checkSpans(t, r.val(m), ix)
		}
		if !rfc {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
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

// TestScanSeeds checks the scanner on the seeds above; FuzzScan's corpus
// (testdata/fuzz/FuzzScan) holds inputs that decoders once got wrong.
func TestScanSeeds(t *testing.T) {
	for _, s := range scanSeeds {
		data := []byte(s)
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid = %v", data, got, want)
		}
		if json.Valid(data) {
			checkSpans(t, TrimSpace(data), nil)
			ix := NewIndex(data)
			checkSpans(t, TrimSpace(data), ix)
			ix.Release()
		}
	}
}

func TestPathString(t *testing.T) {
	for _, c := range []struct {
		p    Path
		want string
	}{
		{Path{}, ""},
		{Path{}.Key("a"), "a"},
		{Path{}.Elem(1).Key("mimeType"), "[1].mimeType"},
		{Path{}.Key("message").Key("content").Elem(2).Key("type"), "message.content[2].type"},
		{Path{}.Key("a").Elem(1).Key("b").Elem(2).Key("c").Elem(3).Key("d"), "a[1].b[2].c[3].d"},
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
				ix := NewIndex(v)
				checkSpans(t, v, ix)
				ix.Release()
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

// PlainString, the fast path for strings, agrees with encoding/json whenever
// it accepts.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"\u00e9"`, `"é"`, `""`, `"a`, `5`, `"tab	"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := PlainString(data)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(data, &want); err != nil || s != want {
			t.Fatalf("PlainString(%q) = %q; encoding/json gives %q, %v", data, s, want, err)
		}
	})
}
