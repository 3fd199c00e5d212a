package jsonx

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// A small scanner over JSON that is already known to be valid (checked once,
// by the entry point, with NewIndex). It finds where values end, splits
// objects and arrays into the spans of their members without copying, and
// decodes strings. On invalid input its results
// are meaningless: never call it on unchecked bytes.
//
// Decoding nested values from spans is what keeps decoding linear: each
// level no longer validates and copies everything below it again.

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// TrimSpace returns data without leading and trailing JSON whitespace.
func TrimSpace(data []byte) []byte {
	i := skipSpace(data, 0)
	j := len(data)
	for j > i {
		switch data[j-1] {
		case ' ', '\t', '\n', '\r':
			j--
			continue
		}
		break
	}
	return data[i:j]
}

// stringEnd returns the index just past the string whose opening quote is at
// data[i].
func stringEnd(data []byte, i int) int {
	i++
	// Most strings are short (keys, names, ids): a plain loop first.
	for n := 0; n < 32 && i < len(data); n++ {
		switch data[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
	for i < len(data) {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data) // only on invalid input
		}
		i += j
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		n := 0
		for k := i - 1; data[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
		i++
	}
	return len(data) // only on invalid input
}

// valueEnd returns the index just past the value that starts at data[i];
// ix, if not nil, is the index of the document data is a span of.
func valueEnd(data []byte, i int, ix *Index) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		if end, ok := ix.end(data, i); ok {
			return end
		}
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = stringEnd(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // a number, true, false or null
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// member is one member of an object, as offsets into the object's span (no
// pointers: readers' members are recycled and never scanned by the GC).
type member struct {
	ks, ke int  // the key, decoded: data[ks:ke], or keys[ks:ke] if esc
	vs, ve int  // the value as it appears: data[vs:ve]
	esc    bool // the key had escapes or invalid UTF-8; decoded into keys
	taken  bool
}

// split appends the members of r.data, a valid JSON object without
// surrounding whitespace, to ms in input order (duplicates included).
func (r *Reader) split(ms []member) []member {
	obj := r.data
	i := skipSpace(obj, 1)
	if obj[i] == '}' {
		return ms
	}
	for {
		end := stringEnd(obj, i)
		m := member{ks: i + 1, ke: end - 1}
		if key := obj[i+1 : end-1]; !plainUTF8(key) {
			m.ks = len(r.keys)
			r.keys = appendUnquoted(r.keys, key)
			m.ke, m.esc = len(r.keys), true
		}
		i = skipSpace(obj, skipSpace(obj, end)+1) // past the colon
		m.vs, m.ve = i, valueEnd(obj, i, r.path.ix)
		ms = append(ms, m)
		i = skipSpace(obj, m.ve)
		if obj[i] != ',' {
			return ms // the closing brace
		}
		i = skipSpace(obj, i+1)
	}
}

// forElements calls f with each element of arr, a valid JSON array without
// surrounding whitespace, and its index; it stops at the first error. ix, if
// not nil, is the index of the document arr is a span of.
func forElements(arr []byte, ix *Index, f func(i int, v []byte) error) error {
	i := skipSpace(arr, 1)
	if arr[i] == ']' {
		return nil
	}
	for n := 0; ; n++ {
		end := valueEnd(arr, i, ix)
		if err := f(n, arr[i:end]); err != nil {
			return err
		}
		i = skipSpace(arr, end)
		if arr[i] != ',' {
			return nil
		}
		i = skipSpace(arr, i+1)
	}
}

// Elements calls f with each element of arr, a valid JSON array without
// surrounding whitespace that is a span of p's document, its index and its
// path; it stops at the first error and returns it.
func Elements(arr []byte, p Path, f func(i int, v []byte, p Path) error) error {
	return forElements(arr, p.ix, func(i int, v []byte) error { return f(i, v, p.Elem(i)) })
}

// Count returns the number of elements of arr, a valid JSON array without
// surrounding whitespace that is a span of p's document.
func Count(arr []byte, p Path) int { return countElements(arr, p.ix) }

// countElements returns the number of elements of arr, a valid JSON array
// without surrounding whitespace.
func countElements(arr []byte, ix *Index) int {
	n := 0
	_ = forElements(arr, ix, func(int, []byte) error { n++; return nil }) // the callback never fails
	return n
}

// plainUTF8 reports whether the inside of a valid JSON string decodes to
// itself: no escapes, and valid UTF-8 (invalid bytes decode to U+FFFD).
func plainUTF8(s []byte) bool {
	if len(s) < 32 { // keys, names, ids: a loop beats two calls
		for _, c := range s {
			if c == '\\' || c >= utf8.RuneSelf {
				return bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s)
			}
		}
		return true
	}
	return bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s)
}

// Unquote decodes v, a valid JSON string with its quotes: escapes resolved,
// a \u escape of a lone surrogate and each byte of invalid UTF-8 replaced by
// U+FFFD.
func Unquote(v []byte) string {
	inner := v[1 : len(v)-1]
	if plainUTF8(inner) {
		return string(inner)
	}
	return string(appendUnquoted(make([]byte, 0, len(inner)), inner))
}

// appendUnquoted appends the decoded inside of a valid JSON string to dst:
// escapes resolved, a \u escape of a lone surrogate and each byte of invalid
// UTF-8 replaced by U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		j := plainRunEnd(s, i)
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(s[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s[i+2 : i+6])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // " \ /
				dst = append(dst, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}

// hex4 decodes four hex digits (valid input has them after \u).
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// compactValid returns a copy of v, a valid JSON value, without insignificant
// whitespace and with U+2028 and U+2029 escaped (AppendCompact).
func compactValid(v []byte) []byte { return AppendCompact(make([]byte, 0, len(v)), v) }

// parseInt decodes a JSON integer of at most 18 digits, which cannot
// overflow; ok is false for anything else.
func parseInt(b []byte) (n int64, ok bool) {
	digits := b
	if len(b) > 0 && b[0] == '-' {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(b) {
		n = -n
	}
	return n, true
}

// appendMarshalled appends v, valid JSON, compacted, with <, > and & and
// U+2028, U+2029 escaped in strings (as json.Marshal writes a
// json.RawMessage: what DecodeKnown hands to encoding/json).
func appendMarshalled(dst, v []byte) []byte {
	const hex = "0123456789abcdef"
	start, inString := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !inString {
			switch c {
			case '"':
				inString = true
			case ' ', '\t', '\n', '\r':
				dst = append(dst, v[start:i]...)
				start = i + 1
			}
			continue
		}
		switch {
		case c == '\\':
			i++ // the escaped byte
		case c == '"':
			inString = false
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, v[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8: // U+2028, U+2029
			dst = append(dst, v[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[v[i+2]&0xF])
			i += 2
			start = i + 1
		}
	}
	return append(dst, v[start:]...)
}

// Word-at-a-time tests on 8 bytes of a string at once.
const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// hasZero is not 0 if a byte of x is 0.
func hasZero(x uint64) uint64 { return (x - lsbs) &^ x & msbs }

// hasByte is not 0 if a byte of x is c.
func hasByte(x uint64, c byte) uint64 { return hasZero(x ^ lsbs*uint64(c)) }

// hasLess is not 0 if a byte of x is less than n (n <= 128).
func hasLess(x uint64, n byte) uint64 { return (x - lsbs*uint64(n)) &^ x & msbs }

// plainRunEnd returns the index of the first backslash or non-ASCII byte in
// s at or after i, or len(s).
func plainRunEnd(s []byte, i int) int {
	for i+8 <= len(s) {
		x := binary.LittleEndian.Uint64(s[i:])
		if x&msbs|hasByte(x, '\\') != 0 {
			break
		}
		i += 8
	}
	for i < len(s) && s[i] != '\\' && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}
