package events

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// jsonWriter appends JSON to one byte slice: objects member by member, in
// call order, with the bytes encoding/json wrote for the same values before
// (the encoders went through it, with reflection for every member).
//
// Strings are escaped as encoding/json escapes them without HTML escaping;
// keys as json.Marshal escapes them (with it); numbers formatted as it formats
// them. Raw JSON values (json.RawMessage, Extra) are written as they are,
// except when inEnvelope is set: the value is then written where encoding/json
// used to write it, and encoding/json compacts (and so checks) what a
// json.Marshaler or a json.RawMessage gives it.
type jsonWriter struct {
	b          []byte
	n          int // members written in the innermost open object
	inEnvelope bool
	err        error
}

// begin opens an object; end closes it, given what begin returned.
func (w *jsonWriter) begin() int {
	w.b = append(w.b, '{')
	n := w.n
	w.n = 0
	return n
}

func (w *jsonWriter) end(n int) {
	w.b = append(w.b, '}')
	w.n = n
}

// result returns the bytes written, or the first error.
func (w *jsonWriter) result() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

func (w *jsonWriter) fail(k string, err error) {
	if w.err == nil {
		w.err = fmt.Errorf("%s: %w", k, err)
	}
}

// key writes the comma before a member, if any, and its key.
func (w *jsonWriter) key(k string) { w.b = w.keyed(k) }

// keyed returns w.b with the comma before a member, if any, and its key
// appended; the caller stores it back. (One store to w.b per member: each is
// a pointer write with a barrier while the GC runs.)
func (w *jsonWriter) keyed(k string) []byte {
	b := w.b
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

func (w *jsonWriter) str(k, v string) {
	w.b = appendJSONString(w.keyed(k), v, false)
}

func (w *jsonWriter) optStr(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *jsonWriter) nullableStr(k string, v *string) {
	if v == nil {
		w.b = append(w.keyed(k), "null"...)
		return
	}
	w.str(k, *v)
}

func (w *jsonWriter) boolean(k string, v bool) {
	w.b = strconv.AppendBool(w.keyed(k), v)
}

func (w *jsonWriter) optBool(k string, v bool) {
	if v {
		w.boolean(k, v)
	}
}

func (w *jsonWriter) int(k string, v int64) {
	w.b = strconv.AppendInt(w.keyed(k), v, 10)
}

func (w *jsonWriter) optInt(k string, v int64) {
	if v != 0 {
		w.int(k, v)
	}
}

func (w *jsonWriter) float(k string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.fail(k, &json.UnsupportedValueError{Str: strconv.FormatFloat(v, 'g', -1, 64)})
		return
	}
	w.b = appendJSONFloat(w.keyed(k), v)
}

// strs writes a list of strings; nil is null.
func (w *jsonWriter) strs(k string, v []string) {
	w.key(k)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendJSONString(w.b, s, false)
	}
	w.b = append(w.b, ']')
}

// strMap writes a map of strings, keys in order; keys are not HTML-escaped,
// as encoding/json writes a map with HTML escaping off.
func (w *jsonWriter) strMap(k string, m map[string]string) {
	w.key(k)
	if m == nil {
		w.b = append(w.b, "null"...)
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.b = append(w.b, '{')
	for i, k := range keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendJSONString(w.b, k, false)
		w.b = append(w.b, ':')
		w.b = appendJSONString(w.b, m[k], false)
	}
	w.b = append(w.b, '}')
}

// raw writes v; see inEnvelope.
func (w *jsonWriter) raw(k string, v json.RawMessage) {
	if !w.inEnvelope {
		w.b = append(w.keyed(k), v...)
		return
	}
	ix := indexJSON(v)
	if ix == nil {
		w.fail(k, fmt.Errorf("invalid JSON value %q", v))
		return
	}
	ix.release()
	w.b = appendCompact(w.keyed(k), v)
}

func (w *jsonWriter) optRaw(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.raw(k, v)
	}
}

// extra writes the members of x, in key order.
func (w *jsonWriter) extra(x Extra) {
	switch len(x) {
	case 0:
		return
	case 1:
		for k, v := range x {
			w.raw(k, v)
		}
		return
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.raw(k, x[k])
	}
}

// appendCompact appends v, valid JSON, without insignificant whitespace:
// what json.Compact writes.
func appendCompact(dst, v []byte) []byte {
	start := 0
	for i := 0; i < len(v); {
		switch v[i] {
		case ' ', '\t', '\n', '\r':
			dst = append(dst, v[start:i]...)
			i++
			start = i
		case '"':
			i = stringEnd(v, i)
		default:
			i++
		}
	}
	return append(dst, v[start:]...)
}

// appendJSONString appends s quoted as encoding/json quotes it: invalid UTF-8
// becomes U+FFFD, U+2028 and U+2029 are escaped, and, with html, so are <, >
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

// jsonSafe holds the ASCII bytes encoding/json writes as they are in a
// string; jsonSafeHTML the same less <, > and &.
var jsonSafe, jsonSafeHTML = func() (safe, html [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		safe[c] = c != '"' && c != '\\'
		html[c] = safe[c] && c != '<' && c != '>' && c != '&'
	}
	return safe, html
}()

// plainStringRunEnd returns the index of the first byte of s at or after i
// that encoding/json does not write as it is in a string (HTML escaping
// off), or that starts a multi-byte character; or len(s).
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

// appendJSONFloat appends f, finite, as encoding/json writes a float64:
// plain decimal between 1e-6 and 1e21, exponent form outside, shortest
// representation that reads back the same.
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
