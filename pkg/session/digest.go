package session

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Digest returns the digest of stored bytes: "sha256:" and 64 hex digits.
// An entry's ParentDigest is the Digest of the stored bytes of the entry
// before it on the session's subject; blobs are named by the Digest of their
// content.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// encodeEntry returns the canonical stored form of e (schema version set).
func encodeEntry(e events.Entry) ([]byte, error) {
	e.V = events.SchemaVersion
	data, err := e.MarshalJSON() // canonical, no HTML escaping; not json.Marshal, which would compact and escape it again
	if err != nil {
		return nil, fmt.Errorf("session: encode entry %s: %w", e.ID, err)
	}
	return data, nil
}

// decodeRecord decodes stored bytes into a record (blobs not yet restored).
func decodeRecord(sid string, seq uint64, data []byte) (Record, error) {
	e, err := events.DecodeEntry(data)
	if err != nil {
		return Record{}, fmt.Errorf("%w: session %s sequence %d: %w", ErrCorrupt, sid, seq, err)
	}
	return Record{Session: sid, Seq: seq, Entry: e, Data: data, Digest: Digest(data)}, nil
}
