package provision

import (
	"fmt"
	"strings"
)

// Kind is what an object is.
type Kind string

// The kinds of objects [Apply] provisions.
const (
	KindStream      Kind = "stream"
	KindKeyValue    Kind = "KV bucket"
	KindObjectStore Kind = "object store"
	KindConsumer    Kind = "consumer"
)

// Action is what [Apply] did to an object.
type Action int

// What [Apply] did.
const (
	Unchanged Action = iota // it existed with Cairn's configuration
	Created                 // it was missing
	Updated                 // it existed with other settings, now Cairn's
)

func (a Action) String() string {
	switch a {
	case Created:
		return "created"
	case Updated:
		return "updated"
	default:
		return "unchanged"
	}
}

// Change is what [Apply] did to one object.
type Change struct {
	Kind   Kind
	Name   string // stream or bucket; a consumer as "<durable> on <stream>"
	Action Action
	Fields []Field // what an update changed
}

// String is one line for people: "updated stream CAIRN_SESSIONS: Replicas 1 -> 3".
func (c Change) String() string {
	s := fmt.Sprintf("%s %s %s", c.Action, c.Kind, c.Name)
	if len(c.Fields) == 0 {
		return s
	}
	parts := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		parts[i] = f.String()
	}
	return s + ": " + strings.Join(parts, ", ")
}

// Report lists what [Apply] did, one [Change] per object, in the order it
// provisioned them: streams, KV buckets, object stores, consumers.
type Report []Change

// Count is the number of objects that got action a.
func (r Report) Count(a Action) int {
	n := 0
	for _, c := range r {
		if c.Action == a {
			n++
		}
	}
	return n
}
