package events

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// MaxIDLen is the longest session or entry id.
const MaxIDLen = 64

// ValidateSessionID reports whether id is a valid session id: 1–64 characters
// of [A-Za-z0-9_-]. The error names the problem.
func ValidateSessionID(id string) error { return validateID("id", "session id", id) }

// ValidateEntryID reports whether id is a valid entry id; the rule is the same
// as for session ids (pi's 8-hex ids and UUIDs both fit).
func ValidateEntryID(id string) error { return validateID("id", "entry id", id) }

func validateID(field, what, id string) error {
	if id == "" {
		return fieldErr(field, "%s is empty", what)
	}
	if len(id) > MaxIDLen {
		return fieldErr(field, "%s is %d characters long; the limit is %d", what, len(id), MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			return fieldErr(field, "%s %q has %q at position %d; only A-Z a-z 0-9 _ - are allowed", what, id, id[i], i)
		}
	}
	return nil
}

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// DeriveID returns a deterministic entry id for an effect of cause, such as
// the user message a command produced (DeriveID("cmd", commandID, "user")) or
// the result of a tool call (DeriveID("tool", toolCallID)). The same parts
// always give the same 16 hex characters, so an append retried after a crash
// carries the same id and is deduplicated by the log.
func DeriveID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:8])
}

// NewID returns a random 16-hex-character id for values with no cause to
// derive one from.
func NewID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b[:])
}
