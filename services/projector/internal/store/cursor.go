package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
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

func unmarshal(key, value []byte, v any) error {
	if err := json.Unmarshal(value, v); err != nil {
		return fmt.Errorf("store: decode %q: %w", key, err)
	}
	return nil
}
