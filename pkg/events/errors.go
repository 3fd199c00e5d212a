package events

import (
	"errors"
	"fmt"
)

// ErrInvalid is matched by every validation error of this package:
// errors.Is(err, ErrInvalid) holds for any [*FieldError].
var ErrInvalid = errors.New("invalid")

// FieldError says which field of a decoded value is wrong and why.
type FieldError struct {
	Field   string // JSON path of the field, e.g. "message.content[0].type"
	Problem string // what is wrong, e.g. "is required"
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// Is makes errors.Is(err, ErrInvalid) true for every FieldError.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// prefixed returns err with its field path placed under prefix.
func prefixed(prefix string, err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) || prefix == "" {
		return err
	}
	field := prefix
	switch {
	case fe.Field == "":
	case fe.Field[0] == '[':
		field += fe.Field
	default:
		field += "." + fe.Field
	}
	return &FieldError{Field: field, Problem: fe.Problem}
}

func required(field string) error { return fieldErr(field, "is required") }
