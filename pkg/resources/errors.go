package resources

import (
	"errors"
	"fmt"
)

// ErrInvalid matches every [*Error].
var ErrInvalid = errors.New("invalid resource")

// Error says why a skill or template was refused: the resource, the line
// of its text the problem is on (0: the whole resource) and the reason.
type Error struct {
	Kind   string // "skill", "template" or "system"
	Name   string
	Line   int
	Reason string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s %q: line %d: %s", e.Kind, e.Name, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s %q: %s", e.Kind, e.Name, e.Reason)
}

// Is matches [ErrInvalid].
func (e *Error) Is(target error) bool { return target == ErrInvalid }
