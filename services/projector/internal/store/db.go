package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// DefaultMemTableSize is the memtable size the projector opens Pebble with:
// Pebble's 4 MiB default stalls commits under load (NATS_NOTES.md).
const DefaultMemTableSize = 64 << 20

// Options configure [Open]. The zero value opens a directory on disk with
// DefaultMemTableSize.
type Options struct {
	FS           vfs.FS // default vfs.Default
	MemTableSize uint64 // default DefaultMemTableSize
	ReadOnly     bool
	// Logger receives Pebble's own messages. Default: discarded (a Fatalf
	// still panics, as Pebble requires).
	Logger pebble.Logger
}

// ErrLayout means the database was written by an incompatible layout version.
var ErrLayout = errors.New("store: database has another layout version; rebuild it")

// DB is the projector's Pebble database.
type DB struct {
	db *pebble.DB
}

// Open opens (or creates) the database in dir.
func Open(dir string, o Options) (*DB, error) {
	if o.MemTableSize == 0 {
		o.MemTableSize = DefaultMemTableSize
	}
	if o.Logger == nil {
		o.Logger = quietLogger{}
	}
	po := &pebble.Options{
		FS:           o.FS,
		MemTableSize: o.MemTableSize,
		ReadOnly:     o.ReadOnly,
		Logger:       o.Logger,
	}
	// Two memtables may be queued before writes stall.
	po.MemTableStopWritesThreshold = 4
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	d := &DB{db: db}
	v, err := d.get([]byte(keyLayout))
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	switch {
	case v == nil && !o.ReadOnly:
		if err := db.Set([]byte(keyLayout), []byte(layoutVersion), pebble.Sync); err != nil {
			return nil, errors.Join(fmt.Errorf("store: write layout version: %w", err), db.Close())
		}
	case v != nil && string(v) != layoutVersion:
		return nil, errors.Join(fmt.Errorf("%w (found %q, this build writes %q)", ErrLayout, v, layoutVersion), db.Close())
	}
	return d, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Applied returns the stream sequence of the last entry the database covers
// (0 for an empty database).
func (d *DB) Applied() (uint64, error) {
	v, err := d.get([]byte(keyApplied))
	if err != nil || v == nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("store: %s has %d bytes, want 8", keyApplied, len(v))
	}
	return decodeApplied(v), nil
}

// decodeApplied reads the value of meta/applied (0 if malformed; Applied
// reports that).
func decodeApplied(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// get returns a copy of the value at key, or nil if there is none.
func (d *DB) get(key []byte) ([]byte, error) {
	v, c, err := d.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %q: %w", key, err)
	}
	out := append([]byte(nil), v...)
	return out, c.Close()
}

// Flush forces memtables to disk (used before a clean shutdown and by tests).
func (d *DB) Flush() error { return d.db.Flush() }

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...)) // pebble expects Fatalf not to return
}

var _ io.Closer = (*DB)(nil)
