package jsonx

import "fmt"

// Error is a problem with one value of a decoded document.
type Error struct {
	Field   string // the value's path, e.g. "message.content[0].type"; "" for the document
	Problem string // what is wrong, e.g. "is required"
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

func fieldErr(field, format string, args ...any) error {
	return &Error{Field: field, Problem: fmt.Sprintf(format, args...)}
}
