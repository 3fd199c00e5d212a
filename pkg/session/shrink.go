package session

import (
	"bytes"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
)

// stored is a record kept in its stored form only: what an idle session
// needs to go on appending (sequence and digest of the last one) and to be
// decoded again when it runs.
type stored struct {
	seq    uint64
	data   []byte
	digest string
	// entry is kept decoded when the stored bytes alone do not give it
	// back: its large parts are blob references, and restoring them needs
	// the blob store.
	entry *events.Entry
}

// storedBlobRef is how a block whose content moved to the blob store names it in
// stored bytes (text escaped in JSON never contains it).
var storedBlobRef = []byte(`"` + blobKey + `":`)

// Shrink drops the session's decoded entries and its tree, keeping each
// record only as stored (sequence, bytes, digest): an idle session then
// costs little more than its stored bytes. Every method that needs entries
// decodes them again first (the entries are those it had: decoding is
// deterministic), so shrinking changes what a Session costs, never what it
// answers. Shrink on a shrunk session does nothing.
func (s *Session) Shrink() {
	if s.shrunk != nil || len(s.recs) == 0 {
		return
	}
	st := make([]stored, len(s.recs))
	for i := range s.recs {
		r := &s.recs[i]
		// An exact-size copy: the encoder's buffer may be twice as large.
		st[i] = stored{seq: r.Seq, data: bytes.Clone(r.Data), digest: r.Digest}
		if bytes.Contains(r.Data, storedBlobRef) {
			e := r.Entry
			st[i].entry = &e
		}
	}
	s.shrunk, s.recs, s.kinds, s.idx = st, nil, nil, nil
}

// Shrunk reports whether the session holds its records in stored form only.
func (s *Session) Shrunk() bool { return s.shrunk != nil }

// Expand decodes the records of a shrunk session again (see
// [Session.Shrink]); on a session that is not shrunk it does nothing. Methods
// that need entries call it themselves; a writer may call it to choose when
// the decoding happens.
func (s *Session) Expand() error {
	if s.shrunk == nil {
		return nil
	}
	recs := make([]Record, len(s.shrunk))
	kinds := make(map[string]string, len(s.shrunk))
	for i := range s.shrunk {
		st := &s.shrunk[i]
		r := Record{Session: s.id, Seq: st.seq, Data: st.data, Digest: st.digest}
		if st.entry != nil {
			r.Entry = *st.entry
		} else {
			e, err := events.DecodeEntry(st.data)
			if err != nil {
				return fmt.Errorf("%w: session %s sequence %d: %w", ErrCorrupt, s.id, st.seq, err)
			}
			r.Entry = e
		}
		if i > 0 {
			kinds[r.Entry.ID] = r.Entry.Type
		}
		recs[i] = r
	}
	s.recs, s.kinds, s.shrunk = recs, kinds, nil
	return nil
}

// expanded makes sure the decoded records are there, for the methods that
// cannot return an error: bytes that decoded when they were appended or
// loaded decode again, so a failure is a broken invariant.
func (s *Session) expanded() {
	if err := s.Expand(); err != nil {
		panic(fmt.Sprintf("session: a shrunk session no longer decodes: %v", err))
	}
}
