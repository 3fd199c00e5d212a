package events

import "strconv"

// path names a value in errors, e.g. message.content[2].type: the steps from
// the decoded document's root. Decoders pass it down by value and make it a
// string only when they report an error, so a valid document costs no
// string building. It also carries the document's index, which readers of
// nested values use to skip containers.
type path struct {
	prefix string // the first steps, already a string (long paths)
	steps  [4]pathStep
	n      int
	ix     *index
}

// pathStep is a member name, or an array index when key is "".
type pathStep struct {
	key   string
	index int
}

// key returns the path of p's member k.
func (p path) key(k string) path { return p.add(pathStep{key: k}) }

// index returns the path of p's element i.
func (p path) index(i int) path { return p.add(pathStep{index: i}) }

func (p path) add(s pathStep) path {
	if p.n == len(p.steps) {
		p = path{prefix: p.String(), ix: p.ix}
	}
	p.steps[p.n] = s
	p.n++
	return p
}

// String returns p as FieldError.Field writes it: members joined by dots,
// indexes in brackets, "" for the root.
func (p path) String() string {
	s := p.prefix
	for _, st := range p.steps[:p.n] {
		switch {
		case st.key == "":
			s += "[" + strconv.Itoa(st.index) + "]"
		case s == "":
			s = st.key
		default:
			s += "." + st.key
		}
	}
	return s
}
