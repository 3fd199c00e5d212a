package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Writer appends JSON to one byte slice, B: objects member by member, in
// call order, in the format the package doc states. Callers may append to
// B themselves between members (array brackets, commas, nested values).
//
// Raw JSON values are written as they are, except when InEnvelope is set:
// they are then checked and compacted, and an invalid one is an error.
// The first error is kept; see Result.
type Writer struct {
	B          []byte // the output
	n          int    // members written in the innermost open object
	InEnvelope bool   // check and compact raw values
	err        error
}

// Begin opens an object; End closes it, given what Begin returned.
func (w *Writer) Begin() int {
	w.B = append(w.B, '{')
	n := w.n
	w.n = 0
	return n
}

// End closes the object Begin opened.
func (w *Writer) End(n int) {
	w.B = append(w.B, '}')
	w.n = n
}

// Result returns the bytes written, or the first error.
func (w *Writer) Result() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.B, nil
}

func (w *Writer) fail(k string, err error) {
	if w.err == nil {
		w.err = fmt.Errorf("%s: %w", k, err)
	}
}

// Key writes the comma before a member, if any, and its key.
func (w *Writer) Key(k string) { w.B = w.keyed(k) }

// keyed returns w.B with the comma before a member, if any, and its key
// appended; the caller stores it back. (One store to w.B per member: each is
// a pointer write with a barrier while the GC runs.)
func (w *Writer) keyed(k string) []byte {
	b := w.B
	if w.n > 0 {
		b = append(b, ',')
	}
	w.n++
	for i := 0; i < len(k); i++ {
		if !jsonSafeHTML[k[i]] {
			b = appendJSONString(b, k, true)
			return append(b, ':')
		}
	}
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// Str writes a string member.
func (w *Writer) Str(k, v string) {
	w.B = appendJSONString(w.keyed(k), v, false)
}

// OptStr writes a string member unless v is empty.
func (w *Writer) OptStr(k, v string) {
	if v != "" {
		w.Str(k, v)
	}
}

// NullableStr writes a string member, null if v is nil.
func (w *Writer) NullableStr(k string, v *string) {
	if v == nil {
		w.B = append(w.keyed(k), "null"...)
		return
	}
	w.Str(k, *v)
}

// Bool writes a boolean member.
func (w *Writer) Bool(k string, v bool) {
	w.B = strconv.AppendBool(w.keyed(k), v)
}

// OptBool writes a boolean member if v is true.
func (w *Writer) OptBool(k string, v bool) {
	if v {
		w.Bool(k, v)
	}
}

// Int writes an integer member.
func (w *Writer) Int(k string, v int64) {
	w.B = strconv.AppendInt(w.keyed(k), v, 10)
}

// OptInt writes an integer member unless v is 0.
func (w *Writer) OptInt(k string, v int64) {
	if v != 0 {
		w.Int(k, v)
	}
}

// Float writes a number member; NaN and the infinities, which JSON cannot
// hold, are an error.
func (w *Writer) Float(k string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.fail(k, fmt.Errorf("%v cannot be written in JSON, which has no NaN or infinities", v))
		return
	}
	w.B = appendJSONFloat(w.keyed(k), v)
}

// Strs writes an array of strings; nil is null.
func (w *Writer) Strs(k string, v []string) {
	w.Key(k)
	if v == nil {
		w.B = append(w.B, "null"...)
		return
	}
	w.B = append(w.B, '[')
	for i, s := range v {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.B = appendJSONString(w.B, s, false)
	}
	w.B = append(w.B, ']')
}

// StrMap writes an object of strings, keys in order and written as values
// (not HTML-escaped); nil is null.
func (w *Writer) StrMap(k string, m map[string]string) {
	w.Key(k)
	if m == nil {
		w.B = append(w.B, "null"...)
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.B = append(w.B, '{')
	for i, k := range keys {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.B = appendJSONString(w.B, k, false)
		w.B = append(w.B, ':')
		w.B = appendJSONString(w.B, m[k], false)
	}
	w.B = append(w.B, '}')
}

// Raw writes a raw JSON member; see InEnvelope.
func (w *Writer) Raw(k string, v json.RawMessage) {
	if !w.InEnvelope {
		w.B = append(w.keyed(k), v...)
		return
	}
	ix, err := Check(v)
	if err != nil {
		w.fail(k, fmt.Errorf("a raw value must be valid JSON, got %q (%v)", string(v), err))
		return
	}
	ix.Release()
	w.B = AppendCompact(w.keyed(k), v)
}

// OptRaw writes a raw JSON member unless v is empty.
func (w *Writer) OptRaw(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.Raw(k, v)
	}
}

// Extra writes the members of x, in key order, as raw members.
func (w *Writer) Extra(x map[string]json.RawMessage) {
	switch len(x) {
	case 0:
		return
	case 1:
		for k, v := range x {
			w.Raw(k, v)
		}
		return
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.Raw(k, x[k])
	}
}

// AppendCompact appends v, valid JSON, on one line: without insignificant
// whitespace, and with U+2028 and U+2029 in strings escaped (\u2028,
// \u2029), which some line readers take for line breaks.
func AppendCompact(dst, v []byte) []byte {
	start := 0
	for i := 0; i < len(v); {
		switch v[i] {
		case ' ', '\t', '\n', '\r':
			dst = append(dst, v[start:i]...)
			i++
			start = i
		case '"':
			end := stringEnd(v, i)
			for j := i + 1; j+2 < end; j++ {
				k := bytes.IndexByte(v[j:end], 0xE2)
				if k < 0 {
					break
				}
				j += k
				if j+2 < end && v[j] == 0xE2 && v[j+1] == 0x80 && v[j+2]&^1 == 0xA8 {
					dst = append(dst, v[start:j]...)
					dst = append(dst, '\\', 'u', '2', '0', '2', "89"[v[j+2]&1])
					j += 2
					start = j + 1
				}
			}
			i = end
		default:
			i++
		}
	}
	return append(dst, v[start:]...)
}

// StrValue appends s as a JSON string (a value, after a Key or in an
// array).
func (w *Writer) StrValue(s string) { w.B = appendJSONString(w.B, s, false) }

// Valid reports whether data is one JSON value with only whitespace around
// it.
func Valid(data []byte) bool {
	ix := NewIndex(data)
	ix.Release()
	return ix != nil
}

// appendJSONString appends s quoted as the package doc states: invalid UTF-8
// becomes \ufffd, U+2028 and U+2029 are escaped, and, with html, so are <, >
// and &.
func appendJSONString(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	safe := &jsonSafe
	if html {
		safe = &jsonSafeHTML
	}
	for i := 0; i < len(s); {
		if !html {
			i = plainStringRunEnd(s, i)
			if i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		}
		i += size
		if r == '\u2028' || r == '\u2029' {
			start = i
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// jsonSafe holds the ASCII bytes written as they are in a string;
// jsonSafeHTML the same less <, > and &.
var jsonSafe, jsonSafeHTML = func() (safe, html [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		safe[c] = c != '"' && c != '\\'
		html[c] = safe[c] && c != '<' && c != '>' && c != '&'
	}
	return safe, html
}()

// plainStringRunEnd returns the index of the first byte of s at or after i
// that is not written as it is in a string (HTML escaping off), or that
// starts a multi-byte character; or len(s).
func plainStringRunEnd(s string, i int) int {
	for i+8 <= len(s) {
		x := load64(s, i)
		if bad := x&msbs | hasLess(x, 0x20) | hasByte(x, '"') | hasByte(x, '\\'); bad != 0 {
			// The lowest flag is exact: a borrow only carries upwards,
			// from a byte that is flagged itself.
			return i + bits.TrailingZeros64(bad)>>3
		}
		i += 8
	}
	for i < len(s) && jsonSafe[s[i]] {
		i++
	}
	return i
}

// load64 returns the eight bytes of s at i, little-endian.
func load64(s string, i int) uint64 {
	t := s[i : i+8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

// appendJSONFloat appends f, finite: plain decimal between 1e-6 and 1e21,
// exponent form outside (1e+21, 1e-7: no leading zero in the exponent), the
// shortest representation that reads back the same.
func appendJSONFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
