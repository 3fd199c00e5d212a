package projector

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// dirs are the database directories of a projector. Pebble cannot rename an
// open database, and the live one must stay at Config.Dir (operators and
// `cairn projector dump --data` find it there), so an online rebuild writes
// beside it and the switch-over renames:
//
//	Dir          the live database
//	Dir.rebuild  what an online rebuild fills; at start, discarded
//	Dir.old      the replaced database, during a switch-over; removed after it
//
// The switch-over closes both databases, renames Dir to Dir.old, then
// Dir.rebuild to Dir, syncing the parent directory after each rename. recover makes every
// state a crash can leave whole again: Dir present means it is live (a
// partial Dir.rebuild and a leftover Dir.old are removed); Dir missing with
// Dir.old present means the crash fell between the two renames, when
// Dir.rebuild was complete and closed, so it becomes Dir.
type dirs struct {
	fs              vfs.FS
	live, next, old string
}

func newDirs(fs vfs.FS, dir string) dirs {
	if fs == nil {
		fs = vfs.Default
	}
	dir = filepath.Clean(dir)
	return dirs{fs: fs, live: dir, next: dir + ".rebuild", old: dir + ".old"}
}

func (d dirs) exists(path string) bool {
	_, err := d.fs.Stat(path)
	return err == nil
}

// recover puts the directories in order before the live database opens.
func (d dirs) recover(log *slog.Logger) error {
	if !d.exists(d.live) && d.exists(d.old) {
		from := d.next
		if !d.exists(d.next) {
			from = d.old // cannot happen with the order swap renames in; keep what there is
		}
		log.Warn("projector: finishing a switch-over an online rebuild began before a crash", "dir", d.live, "from", from)
		if err := d.fs.Rename(from, d.live); err != nil {
			return fmt.Errorf("projector: finish the switch-over: %w", err)
		}
		if err := d.syncParent(); err != nil {
			return err
		}
	}
	if d.exists(d.next) {
		log.Warn("projector: discarding the database of an online rebuild that did not finish", "dir", d.next)
		if err := d.fs.RemoveAll(d.next); err != nil {
			return fmt.Errorf("projector: remove %s: %w", d.next, err)
		}
	}
	if d.exists(d.old) {
		if err := d.fs.RemoveAll(d.old); err != nil {
			return fmt.Errorf("projector: remove %s: %w", d.old, err)
		}
	}
	return nil
}

// swap puts the closed rebuilt database at Dir and the closed live one at
// Dir.old. On an error it puts back what it moved, as far as it can.
// between, if set, is called between the two renames (tests crash there).
func (d dirs) swap(between func()) error {
	if err := d.fs.Rename(d.live, d.old); err != nil {
		return fmt.Errorf("projector: rename %s: %w", d.live, err)
	}
	if err := d.syncParent(); err != nil { // a crash now finds Dir.old: recover finishes the swap
		return errors.Join(err, d.fs.Rename(d.old, d.live))
	}
	if between != nil {
		between()
	}
	if err := d.fs.Rename(d.next, d.live); err != nil {
		return errors.Join(fmt.Errorf("projector: rename %s: %w", d.next, err), d.fs.Rename(d.old, d.live))
	}
	return d.syncParent()
}

// unswap undoes swap: the rebuilt database back to Dir.rebuild, the old one
// to Dir.
func (d dirs) unswap() error {
	if err := d.fs.Rename(d.live, d.next); err != nil {
		return fmt.Errorf("projector: rename %s back: %w", d.live, err)
	}
	if err := d.fs.Rename(d.old, d.live); err != nil {
		return fmt.Errorf("projector: rename %s back: %w", d.old, err)
	}
	return d.syncParent()
}

// syncParent makes the renames in Dir's parent durable.
func (d dirs) syncParent() error {
	parent := filepath.Dir(d.live)
	f, err := d.fs.OpenDir(parent)
	if err != nil {
		return fmt.Errorf("projector: open %s: %w", parent, err)
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}
