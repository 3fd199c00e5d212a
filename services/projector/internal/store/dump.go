package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// Digest summarises the whole database: two databases with the same digest
// hold the same keys and values.
type Digest struct {
	Applied uint64 `json:"applied"`
	Keys    int64  `json:"keys"`
	SHA256  string `json:"sha256"`
}

// Dump hashes every key and value in key order (each as a 4-byte length then
// its bytes) of one snapshot, so it may run while a writer commits, and calls fn, if not nil, with each key and value; they are only
// valid during the call.
func (d *DB) Dump(fn func(key, value []byte) error) (Digest, error) {
	r := d.read()
	defer r.close()
	it, err := r.iter(nil, nil)
	if err != nil {
		return Digest{}, err
	}
	defer it.Close()
	h := sha256.New()
	var dg Digest
	for ok := it.First(); ok; ok = it.Next() {
		if string(it.Key()) == keyApplied {
			// From the same snapshot as the rest, so that a digest of a
			// database being written is of one state.
			dg.Applied = decodeApplied(it.Value())
		}
		writeLen(h, it.Key())
		writeLen(h, it.Value())
		dg.Keys++
		if fn != nil {
			if err := fn(it.Key(), it.Value()); err != nil {
				return Digest{}, err
			}
		}
	}
	if err := it.Error(); err != nil {
		return Digest{}, err
	}
	dg.SHA256 = hex.EncodeToString(h.Sum(nil))
	return dg, nil
}

func writeLen(h hash.Hash, b []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	h.Write(n[:])
	h.Write(b)
}
