package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/events"
)

func newConvertCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "convert IN.jsonl OUT.jsonl",
		Short: "convert a pi session file (v1-v3) to a pi v3 file through Cairn's types",
		Long: `Convert reads a pi coding agent session file of format version 1, 2 or 3,
migrates it to version 3 (v1 entries get deterministic ids and a parent chain
in file order; v2 hookMessage messages become custom messages), and writes it
as a version 3 file through Cairn's types. Fields Cairn does not model are
kept. The result is checked before it is written: unique ids, every parentId
names an earlier entry, the entries in their original order. OUT is replaced
atomically, so it may be IN itself, and gets IN's permissions. See
docs/pi-interop.md.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := convertPiFile(args[0], args[1])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "converted %d entries from %s to %s (pi session v%d)\n", n, args[0], args[1], events.PiVersion)
			return nil
		},
	}
}

// convertPiFile converts the pi session file in to version 3 at out and
// returns the number of entries, header excluded.
func convertPiFile(in, out string) (int, error) {
	f, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close() // opened read-only
		return 0, err
	}
	header, entries, err := events.ReadPiFile(f)
	_ = f.Close() // opened read-only, and read
	if err != nil {
		return 0, fmt.Errorf("%s: %w", in, err)
	}
	var buf bytes.Buffer
	if err := events.WritePiFile(&buf, header, entries); err != nil {
		return 0, fmt.Errorf("writing %s: %w", out, err)
	}
	if err := checkConverted(buf.Bytes(), header, entries); err != nil {
		return 0, fmt.Errorf("the converted session is not valid, nothing written: %w", err)
	}
	if err := writeFileAtomic(out, buf.Bytes(), info.Mode().Perm()); err != nil {
		return 0, err
	}
	return len(entries), nil
}

// checkConverted reads the written file back: it must be a valid v3 tree
// (ReadPiFile checks unique ids and parents that name earlier entries) with
// the same header and the same entries in the same order.
func checkConverted(data []byte, header events.Entry, entries []events.Entry) error {
	h, got, err := events.ReadPiFile(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if h.ID != header.ID || h.Version != events.PiVersion {
		return fmt.Errorf("header: session %q version %d, want %q version %d", h.ID, h.Version, header.ID, events.PiVersion)
	}
	if len(got) != len(entries) {
		return fmt.Errorf("%d entries read back, %d converted", len(got), len(entries))
	}
	for i := range got {
		if got[i].ID != entries[i].ID {
			return fmt.Errorf("entry %d: id %q read back, %q converted: order changed", i, got[i].ID, entries[i].ID)
		}
	}
	return nil
}

// writeFileAtomic replaces path with data, with permissions perm: a
// temporary file in the same directory, synced, then renamed over path.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	err = tmp.Chmod(perm)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, errors.Join(err, os.Remove(tmp.Name())))
	}
	return nil
}
