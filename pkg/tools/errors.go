package tools

import (
	"errors"
	"strconv"
)

// ErrOutside is matched by every [*PathError]: the path leaves the workspace.
var ErrOutside = errors.New("outside the workspace")

// PathError says why a path was refused by a [Workspace].
type PathError struct {
	Path      string // the path as the caller gave it
	Workspace string // the workspace directory
	Reason    string // e.g. `escapes the workspace with ".."`
}

func (e *PathError) Error() string {
	return "path " + strconv.Quote(e.Path) + " " + e.Reason + " (workspace " + e.Workspace + ")"
}

// Is makes errors.Is(err, ErrOutside) true for every PathError.
func (e *PathError) Is(target error) bool { return target == ErrOutside }
