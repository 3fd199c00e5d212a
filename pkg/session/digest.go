package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sync"

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
func decodeRecord(sid events.SessionRef, seq uint64, data []byte) (Record, error) {
	e, err := events.DecodeEntry(data)
	if err != nil {
		return Record{}, fmt.Errorf("%w: session %s sequence %d: %w", ErrCorrupt, sid, seq, err)
	}
	return Record{Session: sid, Seq: seq, Entry: e, Data: data, Digest: Digest(data)}, nil
}

// parallelDecode is the number of records above which decodeRecords splits
// the work between goroutines: decoding dominates a cold load.
const parallelDecode = 128

// decodeRecords decodes stored entries (blobs not yet restored), using every
// CPU for long sessions. It returns when all work is done.
func decodeRecords(sid events.SessionRef, seqs []uint64, raws [][]byte) ([]Record, error) {
	recs := make([]Record, len(raws))
	workers := min(runtime.GOMAXPROCS(0), len(raws)/parallelDecode+1)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	per := (len(raws) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, len(raws))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				r, err := decodeRecord(sid, seqs[i], bytes.Clone(raws[i]))
				if err != nil {
					errs[w] = err
					return
				}
				recs[i] = r
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return recs, nil
}
