package toolbus

import (
	"errors"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/workpool"
)

var (
	// ErrNotProvisioned means a stream or bucket the protocol needs is missing;
	// [Provision] creates it.
	ErrNotProvisioned = errors.New("toolbus: not provisioned")
	// ErrConflict means a tool name is already registered by another pool.
	ErrConflict = errors.New("toolbus: conflict")
	// ErrNotFound means a tool is not in the registry.
	ErrNotFound = errors.New("toolbus: not found")
	// ErrShutdown is the cause with which a worker cancels calls it could not
	// finish before its shutdown deadline; they are handed back, not answered.
	// It is the work pool's own cause (pkg/workpool).
	ErrShutdown = workpool.ErrShutdown
	// ErrAborted is the cause with which a call is cancelled by a cancel
	// request for its session.
	ErrAborted = errors.New("toolbus: session aborted")
)

func fieldErr(field, format string, args ...any) error {
	return &events.FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// validateToken checks a pool name: it is one subject token and part of a
// consumer name.
func validatePool(pool string) error {
	if err := events.ValidateToolName("pool", pool); err != nil {
		return fieldErr("pool", "pool name %q: 1-64 characters of A-Z a-z 0-9 _ - expected", pool)
	}
	return nil
}

// validateCallID checks a tool call id: it travels in a header, so it must be
// printable ASCII without spaces, at most 256 bytes.
func validateCallID(id string) error {
	if id == "" {
		return fieldErr("toolCallId", "is required")
	}
	if len(id) > 256 {
		return fieldErr("toolCallId", "is %d bytes long; the limit is 256", len(id))
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return fieldErr("toolCallId", "%q has byte 0x%02x at %d; printable ASCII without spaces expected", id, id[i], i)
		}
	}
	return nil
}
