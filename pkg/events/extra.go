package events

import (
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// Extra holds the JSON fields of an object that Cairn does not model. They are
// kept from decoding and written back after the known fields, in key order, so
// a round trip through Cairn's types loses nothing.
type Extra map[string]json.RawMessage

// formatExtra and parseExtra keep an Extra as a JSON object in a string, for
// types that must stay comparable with ==.
func formatExtra(x Extra) string {
	if len(x) == 0 {
		return ""
	}
	var w jsonx.Writer
	n := w.Begin()
	w.Extra(x)
	w.End(n)
	return string(w.B)
}

func parseExtra(s string) Extra {
	if s == "" {
		return nil
	}
	var x Extra
	_ = json.Unmarshal([]byte(s), &x) // written by formatExtra: always an object
	return x
}
