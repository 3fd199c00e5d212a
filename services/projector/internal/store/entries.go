package store

import (
	"fmt"
	"github.com/cairn-agents/cairn/pkg/events"
	"strings"
)

// EntrySeq returns the stream sequence of entry id in session sid.
func (d *DB) EntrySeq(sid events.SessionRef, id string) (uint64, error) {
	v, err := d.get([]byte(entryIDKey(sid, id)))
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, fmt.Errorf("%w: entry %q in session %q", ErrNotFound, id, sid.ID)
	}
	seq, ok := parseHex16(string(v))
	if !ok {
		return 0, fmt.Errorf("store: entry index of %q holds %q", id, v)
	}
	return seq, nil
}

// Entries calls fn with the entries of session sid after stream sequence
// after, in order, at most limit of them (0 = all). data is only valid during
// the call. The session must exist.
func (d *DB) Entries(sid events.SessionRef, after uint64, limit int, fn func(seq uint64, data []byte) error) error {
	r := d.read()
	defer r.close()
	if _, err := r.session(sid); err != nil {
		return err
	}
	p := entryPrefix(sid)
	lower := p
	if after > 0 {
		lower = entryKey(sid, after) + "\x00"
	}
	it, err := r.iter([]byte(lower), prefixEnd(p))
	if err != nil {
		return err
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok && (limit == 0 || n < limit); ok = it.Next() {
		seq, ok := parseHex16(strings.TrimPrefix(string(it.Key()), p))
		if !ok {
			return fmt.Errorf("store: malformed entry key %q", it.Key())
		}
		if err := fn(seq, it.Value()); err != nil {
			return err
		}
		n++
	}
	return it.Error()
}
