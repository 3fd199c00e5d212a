// Package secret holds credentials so that they cannot leak by accident: a
// [Secret] prints, logs and marshals as "[redacted]"; only [Secret.Reveal]
// returns the value, for the one place that sends it (an HTTP header).
//
// # Concurrency
//
// A Secret is an immutable string, safe for concurrent use.
package secret

import (
	"fmt"
	"log/slog"
)

// Redacted is what a Secret shows instead of its value.
const Redacted = "[redacted]"

// Secret is a credential such as an API key.
type Secret string

// Reveal returns the value, for sending it to the provider.
func (s Secret) Reveal() string { return string(s) }

// IsZero reports whether no value is set.
func (s Secret) IsZero() bool { return s == "" }

// String returns [Redacted] (or "" when unset, so that a missing key shows).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Redacted
}

// GoString is String, so %#v redacts too.
func (s Secret) GoString() string { return s.String() }

// Format writes String whatever the verb and flags: %d, %x or a width
// would otherwise print the value or its bytes.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// LogValue redacts the value in slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText redacts the value in JSON and other text encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
