package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Cursors are opaque to clients: base64url of "<kind>:<last key>".
func encodeCursor(kind, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + key))
}

func decodeCursor(c, kind string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", &InvalidError{"cursor", fmt.Sprintf("%q is not a cursor this server issued", c)}
	}
	k, ok := strings.CutPrefix(string(b), kind+":")
	if !ok {
		return "", &InvalidError{"cursor", fmt.Sprintf("%q belongs to another query", c)}
	}
	return k, nil
}

// timeBounds is the key range of a by-time index under prefix: from since
// (or the start), before until (or the end), and past the cursor's key when
// one is given. A cursor of another kind or other filters is refused.
func timeBounds(prefix, kind string, since, until time.Time, cursor string) (lower, upper []byte, err error) {
	lower = []byte(prefix)
	if !since.IsZero() {
		lower = []byte(prefix + msKey(since.UnixMilli()))
	}
	upper = prefixEnd(prefix)
	if !until.IsZero() {
		upper = []byte(prefix + msKey(until.UnixMilli()))
	}
	if cursor != "" {
		k, err := decodeCursor(cursor, kind)
		if err != nil {
			return nil, nil, err
		}
		if !strings.HasPrefix(k, prefix) {
			return nil, nil, &InvalidError{"cursor", "belongs to a query with other filters"}
		}
		if c := append([]byte(k), 0); string(c) > string(lower) {
			lower = c
		}
	}
	return lower, upper, nil
}

// allBounds is the key range of an index's every tenant (AllTenants) under
// prefix, past the cursor's key when one is given; time bounds are then
// matched on the rows, as each tenant's times start over.
func allBounds(prefix, kind, cursor string) (lower, upper []byte, err error) {
	return timeBounds(prefix, kind, time.Time{}, time.Time{}, cursor)
}

func unmarshal(key, value []byte, v any) error {
	if err := json.Unmarshal(value, v); err != nil {
		return fmt.Errorf("store: decode %q: %w", key, err)
	}
	return nil
}
