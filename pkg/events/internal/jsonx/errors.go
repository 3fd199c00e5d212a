package jsonx

import (
	"errors"
	"fmt"
)

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

// prefixed returns err with its field path placed under prefix.
func prefixed(prefix string, err error) error {
	var e *Error
	if !errors.As(err, &e) || prefix == "" {
		return err
	}
	field := prefix
	switch {
	case e.Field == "":
	case e.Field[0] == '[':
		field += e.Field
	default:
		field += "." + e.Field
	}
	return &Error{Field: field, Problem: e.Problem}
}
