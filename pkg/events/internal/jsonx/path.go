package jsonx

import "strconv"

// Path names a value in errors, e.g. message.content[2].type: the steps from
// the decoded document's root. Decoders pass it down by value and make it a
// string only when they report an error, so a valid document costs no
// string building. It also carries the document's index, which readers of
// nested values use to skip containers.
type Path struct {
	prefix string // the first steps, already a string (long paths)
	steps  [4]pathStep
	n      int
	ix     *Index
}

// pathStep is a member name, or an array index when key is "".
type pathStep struct {
	key   string
	index int
}

// Root returns the path of the root of ix's document.
func (ix *Index) Root() Path { return Path{ix: ix} }

// Key returns the path of p's member k.
func (p Path) Key(k string) Path { return p.add(pathStep{key: k}) }

// Elem returns the path of p's element i.
func (p Path) Elem(i int) Path { return p.add(pathStep{index: i}) }

func (p Path) add(s pathStep) Path {
	if p.n == len(p.steps) {
		p = Path{prefix: p.String(), ix: p.ix}
	}
	p.steps[p.n] = s
	p.n++
	return p
}

// String returns p as an error names it: members joined by dots, indexes in
// brackets, "" for the root.
func (p Path) String() string {
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
