package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// decodeArgs decodes a tool call's arguments into dst strictly: raw must be a
// JSON object, every key one of allowed, every name in required present and
// not null, every value of the right type. A null optional argument counts as
// absent. Errors are [*events.FieldError] values naming the argument.
func decodeArgs(tool string, raw json.RawMessage, dst any, allowed, required []string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return &events.FieldError{Problem: tool + ": arguments must be a JSON object"}
	}
	// Sorted, so that the same arguments always get the same error.
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v := obj[k]
		if !slices.Contains(allowed, k) {
			return &events.FieldError{Field: k, Problem: fmt.Sprintf("unknown argument of %s (it takes %s)", tool, strings.Join(allowed, ", "))}
		}
		if string(v) == "null" {
			delete(obj, k)
		}
	}
	for _, k := range required {
		if _, ok := obj[k]; !ok {
			return &events.FieldError{Field: k, Problem: "is required"}
		}
	}
	clean, err := json.Marshal(obj)
	if err != nil {
		return &events.FieldError{Problem: tool + ": " + err.Error()}
	}
	if err := json.Unmarshal(clean, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &events.FieldError{Field: te.Field, Problem: fmt.Sprintf("must be %s, got JSON %s", describeType(te.Type.Kind().String()), te.Value)}
		}
		return &events.FieldError{Problem: tool + ": " + err.Error()}
	}
	return nil
}

func describeType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int", "int64", "int32":
		return "an integer"
	case "bool":
		return "a boolean"
	case "float64":
		return "a number"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a " + kind
}

func argErr(field, format string, args ...any) error {
	return &events.FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
