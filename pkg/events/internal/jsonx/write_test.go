package jsonx

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// refQuote quotes s as the package doc says, one rune at a time: ", \ and
// control characters escaped (\b \f \n \r \t, else \u00XX), each byte of
// invalid UTF-8 written as \ufffd, U+2028 and U+2029 escaped, and, with
// html, <, > and & too.
func refQuote(s string, html bool) []byte {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20, r == '\u2028', r == '\u2029', html && (r == '<' || r == '>' || r == '&'):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return []byte(b.String())
}

// The string writer writes what the package doc states.
func TestAppendJSONStringExamples(t *testing.T) {
	for _, c := range []struct{ in, want, html string }{
		{"", `""`, `""`},
		{"plain text", `"plain text"`, `"plain text"`},
		{"<a href=\"x\">&amp;</a>", `"<a href=\"x\">&amp;</a>"`, `"\u003ca href=\"x\"\u003e\u0026amp;\u003c/a\u003e"`},
		{"\b\f\n\r\t\\/", `"\b\f\n\r\t\\/"`, `"\b\f\n\r\t\\/"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`, `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"x\u2028y\u2029z", `"x\u2028y\u2029z"`, `"x\u2028y\u2029z"`},
		{"\xff\xfe", `"\ufffd\ufffd"`, `"\ufffd\ufffd"`},
		{"a\xe2\x80", `"a\ufffd\ufffd"`, `"a\ufffd\ufffd"`},
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`, `"\ufffd\ufffd\ufffd"`}, // an encoded surrogate is invalid UTF-8
		{"é😀\u00a0\ufffd", "\"é😀\u00a0\ufffd\"", "\"é😀\u00a0\ufffd\""},
	} {
		if got := appendJSONString(nil, c.in, false); string(got) != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
		if got := appendJSONString(nil, c.in, true); string(got) != c.html {
			t.Errorf("%q (html): got %s, want %s", c.in, got, c.html)
		}
	}
}

// TestAppendJSONString compares the string writer with refQuote on every
// string of one and two bytes, and on runs long enough for the
// eight-byte scan with each byte value at each position, and pairs of bytes
// that need a look at each pair of positions.
func TestAppendJSONString(t *testing.T) {
	check := func(s string) {
		for _, html := range []bool{false, true} {
			if got, want := appendJSONString(nil, s, html), refQuote(s, html); !bytes.Equal(got, want) {
				t.Fatalf("%q (html %v): got %s, want %s", s, html, got, want)
			}
		}
	}
	for a := range 256 {
		check(string([]byte{byte(a)}))
		for b := range 256 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	base := []byte("abcdefghijklmnopqrstuvwx")
	for c := range 256 {
		for i := range base {
			s := bytes.Clone(base)
			s[i] = byte(c)
			check(string(s))
		}
	}
	for _, c := range []byte{'"', '\\', '\n', 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xe2, 0xff, '<', '&'} {
		for _, d := range []byte{'"', '\t', 0x01, 0xa9, 0xe2, '>'} {
			for i := range base {
				for j := i + 1; j < len(base); j++ {
					s := bytes.Clone(base)
					s[i], s[j] = c, d
					check(string(s))
				}
			}
		}
	}
	for _, s := range []string{"\u2028\u2029", "a\u2028b\u2029c", "\xe2\x80", "\xe2\x80\xa8\xe2", "éé\xffé", "\xed\xa0\x80\xed\xbf\xbf", "\U0010ffff\xf4\x90\x80\x80"} {
		check(s)
	}
}

var trickyFloats = []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e20, 1e21, 9.999999999999999e20, -1e21, 1e-6, 9.99e-7, 1e-7,
	1.5e-9, 123456789.123, math.MaxFloat64, 5e-324, 1 << 53, 1<<53 + 1, 1e100, math.NaN(), math.Inf(1), math.Inf(-1)}

// The number writer writes what the package doc states.
func TestAppendJSONFloatExamples(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {1, "1"}, {-1.5, "-1.5"}, {0.1, "0.1"}, {3.0000000000000004, "3.0000000000000004"},
		{1e20, "100000000000000000000"}, {9.999999999999999e20, "999999999999999900000"}, {12345678901234567890, "12345678901234567000"},
		{1e21, "1e+21"}, {-1e21, "-1e+21"}, {1e100, "1e+100"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{1e-5, "0.00001"}, {1e-6, "0.000001"}, {1.234e-6, "0.000001234"}, {9.99e-7, "9.99e-7"}, {1e-7, "1e-7"}, {1.5e-9, "1.5e-9"},
		{-2.5e-300, "-2.5e-300"}, {5e-324, "5e-324"}, {123456789.123, "123456789.123"}, {1 << 53, "9007199254740992"},
	} {
		if got := appendJSONFloat(nil, c.f); string(got) != c.want {
			t.Errorf("%v: got %s, want %s", c.f, got, c.want)
		}
	}
}

// TestAppendJSONFloat checks the number writer on edge values and on
// 300,000 random bit patterns: what it writes reads back as the same
// number, in plain decimal between 1e-6 and 1e21 and in exponent form
// outside (no leading zero in the exponent), with as few digits as
// strconv's shortest form.
func TestAppendJSONFloat(t *testing.T) {
	digits := func(s string) string { // the significant digits of s
		s, _, _ = strings.Cut(strings.TrimLeft(s, "-"), "e")
		s = strings.Trim(strings.ReplaceAll(s, ".", ""), "0")
		return s
	}
	check := func(f float64) {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return
		}
		got := string(appendJSONFloat(nil, f))
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || back != f || math.Signbit(back) != math.Signbit(f) {
			t.Fatalf("%v: wrote %s, which reads back as %v, %v", f, got, back, err)
		}
		abs := math.Abs(f)
		plain := abs == 0 || abs >= 1e-6 && abs < 1e21
		if _, exp, isExp := strings.Cut(got, "e"); isExp == plain || isExp && (exp[0] != '+' && exp[0] != '-' || exp[1] == '0') {
			t.Fatalf("%v: wrote %s", f, got)
		}
		if want := digits(strconv.FormatFloat(f, 'e', -1, 64)); digits(got) != want {
			t.Fatalf("%v: wrote %s, digits %s, want %s", f, got, digits(got), want)
		}
	}
	for _, f := range trickyFloats {
		check(f)
		check(math.Nextafter(f, math.Inf(1)))
		check(math.Nextafter(f, math.Inf(-1)))
	}
	for e := -330; e <= 310; e++ {
		check(math.Pow(10, float64(e)))
		check(-1.5 * math.Pow(10, float64(e)))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300_000 {
		check(math.Float64frombits(r.Uint64()))
	}
	for range 100_000 {
		check(r.Float64() * 1e-3)
		check(float64(r.Int64N(1<<60)) / 1000)
	}
}
