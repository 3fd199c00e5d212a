package jsonx

import (
	"encoding/binary"
	"slices"
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
}

var indexes = sync.Pool{New: func() any { return new(Index) }}

// NewIndex validates data, all of it, and returns its index, or nil if data
// is not valid JSON. Release the index when done with every span of data.
func NewIndex(data []byte) *Index {
	ix := indexes.Get().(*Index)
	if !ix.build(data) {
		ix.Release()
		return nil
	}
	return ix
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
// it, exactly what json.Valid accepts (strings may hold any byte but a
// control character, invalid UTF-8 included; at most 10000 nested arrays and
// objects), and records its containers in ix.
func (ix *Index) build(data []byte) bool {
	const maxDepth = 10000 // encoding/json's limit
	ix.root = data
	ix.starts, ix.ends, ix.stack, ix.members = ix.starts[:0], ix.ends[:0], ix.stack[:0], ix.members[:0]
	i := skipSpace(data, 0)
	for {
		// A value starts at i.
		if i >= len(data) {
			return false
		}
		ok := true
		switch c := data[i]; {
		case c == '{' || c == '[':
			ix.stack = append(ix.stack, len(ix.starts))
			ix.starts = append(ix.starts, i)
			ix.ends = append(ix.ends, 0)
			if len(ix.stack) > maxDepth {
				return false
			}
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' or ']'
				i++
				ix.close(i)
				break
			}
			if c == '{' {
				if i, ok = validKey(data, i); !ok {
					return false
				}
			}
			continue
		case c == '"':
			i, ok = validString(data, i)
		case c == '-' || c >= '0' && c <= '9':
			i, ok = validNumber(data, i)
		case c == 't':
			i, ok = validLiteral(data, i, "true")
		case c == 'f':
			i, ok = validLiteral(data, i, "false")
		case c == 'n':
			i, ok = validLiteral(data, i, "null")
		default:
			return false
		}
		if !ok {
			return false
		}
		// After a value: close containers, or go on to the next member or
		// element.
		for {
			i = skipSpace(data, i)
			if len(ix.stack) == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			top := data[ix.starts[ix.stack[len(ix.stack)-1]]]
			if data[i] == top+2 {
				i++
				ix.close(i)
				continue
			}
			if data[i] != ',' {
				return false
			}
			i = skipSpace(data, i+1)
			if top == '{' {
				if i, ok = validKey(data, i); !ok {
					return false
				}
			}
			break
		}
	}
}

// close records that the innermost open container ends just before i.
func (ix *Index) close(i int) {
	k := ix.stack[len(ix.stack)-1]
	ix.stack = ix.stack[:len(ix.stack)-1]
	ix.ends[k] = i
}

// validKey checks a key and its colon at data[i:] and returns the index of
// the value after them.
func validKey(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := validString(data, i)
	if !ok {
		return i, false
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	return skipSpace(data, i+1), true
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
// index just past it.
func validString(data []byte, i int) (int, bool) {
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
			return i, false
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		}
		// A backslash.
		if i+1 >= len(data) {
			return i, false
		}
		switch data[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(data) || hex4(data[i+2:i+6]) < 0 {
				return i, false
			}
			i += 6
		default:
			return i, false
		}
	}
}

// validNumber checks the number that starts at data[i] and returns the index
// just past it.
func validNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(data, i+1)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

func validLiteral(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}
