package jsonx

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// Index records where each array and object of a document ends. It is made
// while the document is validated, once, so that readers of nested values
// skip over containers without scanning them again: without it, each byte
// would be scanned once per level of nesting above it.
type Index struct {
	root   []byte
	starts []int // offset in root of each '{' and '[', in document order
	ends   []int // ends[k]: the offset just past the container at starts[k]
	stack  []int // open containers while indexing: their k

	members []member // the members of the objects being read (see ReadValidObject)
	bad     *Error   // why build failed
}

var indexes = sync.Pool{New: func() any { return new(Index) }}

// NewIndex validates data, all of it, and returns its index, or nil if data
// is not valid JSON. Release the index when done with every span of data.
func NewIndex(data []byte) *Index {
	ix, _ := Check(data)
	return ix
}

// Check validates data, all of it, and returns its index, or the *Error
// that says where and why data is not valid JSON. Release the index when
// done with every span of data.
func Check(data []byte) (*Index, error) {
	ix := indexes.Get().(*Index)
	if !ix.build(data) {
		err := ix.bad
		ix.bad = nil
		ix.Release()
		return nil, err
	}
	return ix, nil
}

// Release hands ix back for reuse; a nil ix is fine.
func (ix *Index) Release() {
	if ix == nil {
		return
	}
	ix.root = nil
	if cap(ix.starts) <= 4096 && cap(ix.members) <= 4096 {
		indexes.Put(ix)
	}
}

// end returns the index just past the container that starts at data[i],
// data being a span of ix's document; ok is false if ix does not know it.
func (ix *Index) end(data []byte, i int) (end int, ok bool) {
	if ix == nil {
		return 0, false
	}
	base := cap(ix.root) - cap(data) // data's offset in root, if it is a span of it
	if base < 0 || base+i >= len(ix.root) || &ix.root[base+i] != &data[i] {
		return 0, false
	}
	k, found := slices.BinarySearch(ix.starts, base+i)
	if !found {
		return 0, false
	}
	return ix.ends[k] - base, true
}

// build reports whether data is one JSON value with only whitespace around
// it (RFC 8259; strings may hold any byte but a control character, invalid
// UTF-8 included; at most maxDepth nested arrays and objects), and records
// its containers in ix. When it is not, ix.bad says where and why.
func (ix *Index) build(data []byte) bool {
	ix.root = data
	ix.starts, ix.ends, ix.stack, ix.members = ix.starts[:0], ix.ends[:0], ix.stack[:0], ix.members[:0]
	i := skipSpace(data, 0)
	for {
		// A value starts at i.
		var bad string
		switch c := byteAt(data, i); {
		case c == '{' || c == '[':
			ix.stack = append(ix.stack, len(ix.starts))
			ix.starts = append(ix.starts, i)
			ix.ends = append(ix.ends, 0)
			if len(ix.stack) > maxDepth {
				return ix.fail(i, "more than 10000 nested arrays and objects")
			}
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' or ']'
				i++
				ix.close(i)
				break
			}
			if c == '{' {
				if i, bad = validKey(data, i); bad != "" {
					return ix.fail(i, bad)
				}
			}
			continue
		case c == '"':
			i, bad = validString(data, i)
		case c == '-' || c >= '0' && c <= '9':
			i, bad = validNumber(data, i)
		case c == 't':
			i, bad = validLiteral(data, i, "true")
		case c == 'f':
			i, bad = validLiteral(data, i, "false")
		case c == 'n':
			i, bad = validLiteral(data, i, "null")
		default:
			bad = "want a value, got " + describeByte(data, i)
		}
		if bad != "" {
			return ix.fail(i, bad)
		}
		// After a value: close containers, or go on to the next member or
		// element.
		for {
			i = skipSpace(data, i)
			if len(ix.stack) == 0 {
				if i != len(data) {
					return ix.fail(i, "want the end of the input after the value, got "+describeByte(data, i))
				}
				return true
			}
			top := data[ix.starts[ix.stack[len(ix.stack)-1]]]
			if c := byteAt(data, i); c == top+2 {
				i++
				ix.close(i)
				continue
			} else if c != ',' {
				return ix.fail(i, "want ',' or '"+string(top+2)+"', got "+describeByte(data, i))
			}
			i = skipSpace(data, i+1)
			if top == '{' {
				if i, bad = validKey(data, i); bad != "" {
					return ix.fail(i, bad)
				}
			}
			break
		}
	}
}

// maxDepth is the deepest nesting of arrays and objects a document may have.
const maxDepth = 10000

// fail records that data is not valid JSON, at offset i, and why.
func (ix *Index) fail(i int, why string) bool {
	ix.bad = &Error{Problem: "invalid JSON at offset " + strconv.Itoa(i) + ": " + why}
	return false
}

// byteAt returns data[i], or 0 (never valid where a byte is asked for) past
// the end.
func byteAt(data []byte, i int) byte {
	if i < len(data) {
		return data[i]
	}
	return 0
}

// describeByte names data[i] in errors: 'x' for printable ASCII, byte 0x01
// otherwise, "the end of the input" past the end.
func describeByte(data []byte, i int) string {
	switch {
	case i >= len(data):
		return "the end of the input"
	case data[i] > ' ' && data[i] < 0x7f:
		return "'" + string(data[i]) + "'"
	}
	return fmt.Sprintf("byte 0x%02x", data[i])
}

// close records that the innermost open container ends just before i.
func (ix *Index) close(i int) {
	k := ix.stack[len(ix.stack)-1]
	ix.stack = ix.stack[:len(ix.stack)-1]
	ix.ends[k] = i
}

// validKey checks a key and its colon at data[i:] and returns the index of
// the value after them, or the index of a problem and what it is.
func validKey(data []byte, i int) (int, string) {
	if byteAt(data, i) != '"' {
		return i, "want a string (a member's key), got " + describeByte(data, i)
	}
	i, bad := validString(data, i)
	if bad != "" {
		return i, bad
	}
	i = skipSpace(data, i)
	if byteAt(data, i) != ':' {
		return i, "want ':' after a member's key, got " + describeByte(data, i)
	}
	return skipSpace(data, i+1), ""
}

// strStop marks the bytes that end a run of plain string content.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// validString checks the string whose quote is at data[i] and returns the
// index just past it, or the index of a problem and what it is.
func validString(data []byte, i int) (int, string) {
	i++
	for {
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			if hasLess(x, 0x20)|hasByte(x, '"')|hasByte(x, '\\') != 0 {
				break
			}
			i += 8
		}
		for i < len(data) && !strStop[data[i]] {
			i++
		}
		if i >= len(data) {
			return i, "the input ends inside a string"
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, ""
		case c < 0x20:
			return i, fmt.Sprintf("control character U+%04X in a string (write it escaped)", c)
		}
		// A backslash.
		switch byteAt(data, i+1) {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(data) || hex4(data[i+2:i+6]) < 0 {
				return i, "invalid escape in a string: want four hex digits after \\u"
			}
			i += 6
		case 0:
			if i+1 >= len(data) {
				return i + 1, "the input ends inside a string"
			}
			fallthrough
		default:
			return i, "invalid escape in a string: \\ followed by " + describeByte(data, i+1)
		}
	}
}

// validNumber checks the number that starts at data[i] and returns the index
// just past it, or the index of a problem and what it is.
func validNumber(data []byte, i int) (int, string) {
	if data[i] == '-' {
		i++
	}
	switch c := byteAt(data, i); {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i = digits(data, i+1)
	default:
		return i, "want a digit in a number, got " + describeByte(data, i)
	}
	if byteAt(data, i) == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return j, "want a digit after the decimal point, got " + describeByte(data, j)
		}
		i = j
	}
	if c := byteAt(data, i); c == 'e' || c == 'E' {
		i++
		if c := byteAt(data, i); c == '+' || c == '-' {
			i++
		}
		j := digits(data, i)
		if j == i {
			return j, "want a digit in the exponent, got " + describeByte(data, j)
		}
		i = j
	}
	return i, ""
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

func validLiteral(data []byte, i int, lit string) (int, string) {
	for k := range len(lit) {
		if byteAt(data, i+k) != lit[k] {
			return i + k, "want " + lit + ", got " + describeByte(data, i+k)
		}
	}
	return i + len(lit), ""
}
