package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// LineError is a problem on one line of a pi session file. Err is usually a
// [*FieldError] naming the field, so errors.Is(err, ErrInvalid) holds.
type LineError struct {
	Line int // 1-based line number in the file
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the line's error.
func (e *LineError) Unwrap() error { return e.Err }

// ReadPiFile reads a pi coding agent session file (JSON Lines) of format
// version 1, 2 or 3 and returns its header (the `session` entry) and its
// other entries in file order, migrated to version 3 the way pi migrates
// them:
//
//   - version 1 files (no "version" in the header) are linear and their
//     entries have no ids: every entry gets the id DeriveID("pi-v1",
//     sessionID, position), position being its 0-based index among the
//     file's entries with the header at 0, and the previous entry as parent
//     (the first entry is a root); a compaction's "firstKeptEntryIndex"
//     (that same position) becomes "firstKeptEntryId". The ids are
//     deterministic, so converting a file twice gives the same result.
//   - up to version 2, a message with role "hookMessage" becomes role
//     "custom".
//   - the header's version becomes 3.
//
// Blank lines are skipped. Anything else is decoded strictly (see
// [DecodeEntry]) and the tree is checked (see [CheckTree]); the first problem
// is returned as a [*LineError] with the line number and the field.
// Fields Cairn does not model are kept in each entry's Extra.
func ReadPiFile(r io.Reader) (header Entry, entries []Entry, err error) {
	br := bufio.NewReader(r)
	var (
		lines   []int // line number of each entry, header first
		version int
		pos     int // index of the next entry among the file's entries
		ids     []string
		lineNo  int
	)
	for {
		line, readErr := br.ReadBytes('\n')
		if readErr != nil && readErr != io.EOF {
			return Entry{}, nil, fmt.Errorf("reading pi session file: %w", readErr)
		}
		lineNo++
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			e, err := readPiLine(line, pos, &version, &ids)
			if err != nil {
				return Entry{}, nil, &LineError{Line: lineNo, Err: err}
			}
			if pos == 0 {
				header = e
			} else {
				entries = append(entries, e)
			}
			lines = append(lines, lineNo)
			pos++
		}
		if readErr == io.EOF {
			break
		}
	}
	if pos == 0 {
		return Entry{}, nil, &LineError{Line: 1, Err: fieldErr("type", "the file has no session header (it is empty)")}
	}
	if i, err := checkTree(entries); err != nil {
		return Entry{}, nil, &LineError{Line: lines[i+1], Err: err}
	}
	return header, entries, nil
}

// readPiLine migrates and decodes the entry at position pos of the file. The
// header (pos 0) sets *version; ids collects the ids given to v1 entries.
func readPiLine(line []byte, pos int, version *int, ids *[]string) (Entry, error) {
	if pos > 0 && *version == PiVersion { // nothing to migrate: decode once
		e, err := DecodeEntry(line)
		if err == nil && e.Type == EntrySession {
			return Entry{}, errSecondHeader
		}
		return e, err
	}
	obj, err := readObject(line)
	if err != nil {
		return Entry{}, err
	}
	defer obj.Release()
	m := obj.Members()
	typ := jsonString(m["type"])
	if pos == 0 {
		if typ != EntrySession {
			return Entry{}, fieldErr("type", "the first entry of a pi session file must be the session header, got %s", jsonValueForError(m["type"]))
		}
		v := obj.Int64("version", false)
		if obj.Err() != nil {
			return Entry{}, fieldError(obj.Err())
		}
		if v == 0 { // absent or null: version 1, as pi reads it
			v = 1
		}
		if v < 1 || v > PiVersion {
			return Entry{}, fieldErr("version", "unsupported pi session version %d (want 1, 2 or 3)", v)
		}
		*version = int(v)
		m["version"] = json.RawMessage(itoa(PiVersion))
		h, err := DecodeEntry(mustMarshal(m))
		if err != nil {
			return Entry{}, err
		}
		*ids = append(*ids, h.ID)
		return h, nil
	}
	if typ == EntrySession {
		return Entry{}, errSecondHeader
	}
	migrated := false
	if *version < 2 {
		if err := migrateV1Entry(m, pos, ids); err != nil {
			return Entry{}, err
		}
		migrated = true
	}
	if *version < 3 && typ == EntryMessage {
		if msg, ok := m["message"]; ok {
			var mm map[string]json.RawMessage
			if json.Unmarshal(msg, &mm) == nil && jsonString(mm["role"]) == "hookMessage" {
				mm["role"] = json.RawMessage(`"` + RoleCustom + `"`)
				m["message"] = mustMarshal(mm)
				migrated = true
			}
		}
	}
	if migrated {
		line = mustMarshal(m)
	}
	return DecodeEntry(line)
}

var errSecondHeader = &FieldError{Field: "type", Problem: "a second session header; a pi session file has one, on its first line"}

// migrateV1Entry gives the v1 entry at position pos its id and parent, and
// turns a compaction's firstKeptEntryIndex into firstKeptEntryId.
func migrateV1Entry(m map[string]json.RawMessage, pos int, ids *[]string) error {
	sessionID := (*ids)[0]
	id := DeriveID("pi-v1", sessionID, itoa(pos))
	parent := json.RawMessage("null")
	if pos > 1 {
		parent = mustMarshal((*ids)[pos-1])
	}
	*ids = append(*ids, id)
	m["id"] = mustMarshal(id)
	m["parentId"] = parent
	if jsonString(m["type"]) != EntryCompaction {
		return nil
	}
	raw, ok := m["firstKeptEntryIndex"]
	if !ok {
		return nil
	}
	var idx float64
	if err := json.Unmarshal(raw, &idx); err != nil {
		return fieldErr("firstKeptEntryIndex", "must be a number, got %s", jsonx.Kind(raw))
	}
	if idx != float64(int(idx)) || idx < 1 || int(idx) >= pos {
		return fieldErr("firstKeptEntryIndex", "%s is not the position of an earlier entry (1 to %d)", string(raw), pos-1)
	}
	m["firstKeptEntryId"] = mustMarshal((*ids)[int(idx)])
	delete(m, "firstKeptEntryIndex")
	return nil
}

// jsonString returns v as a string, or "" if it is not a JSON string.
func jsonString(v json.RawMessage) string {
	if s, ok := jsonx.PlainString(v); ok {
		return s
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

func jsonValueForError(v json.RawMessage) string {
	if v == nil {
		return "no type"
	}
	if len(v) > 40 {
		return string(v[:40]) + "..."
	}
	return string(v)
}

// mustMarshal marshals values that cannot fail: strings and maps of raw JSON
// that came from a parse.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("events: marshalling %T: %v", v, err))
	}
	return b
}

// WritePiFile writes header and entries as a pi session file of version 3:
// one canonical JSON entry per line, the header first. Cairn's envelope
// fields that pi does not know ("v", "parentDigest", and the header's
// "tenant": a session exported from one tenant imports into whichever
// tenant the importer acts for) are left out; fields
// Cairn does not model (Extra) are written back. It refuses to write what
// [ReadPiFile] would refuse to read: header must be a `session` entry, every
// entry must be valid, and the entries must form a tree (see [CheckTree]).
// Errors name the field, e.g. "entries[3].message.role".
func WritePiFile(w io.Writer, header Entry, entries []Entry) error {
	if header.Type != EntrySession {
		return fieldErr("header.type", "must be %q, got %q", EntrySession, header.Type)
	}
	if err := CheckTree(entries); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	header.Version, header.Tenant = PiVersion, ""
	if err := writePiLine(bw, "header", header); err != nil {
		return err
	}
	for i, e := range entries {
		if e.Type == EntrySession {
			return fieldErr("entries["+itoa(i)+"].type", "a session header among the entries")
		}
		if err := writePiLine(bw, "entries["+itoa(i)+"]", e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func writePiLine(w *bufio.Writer, path string, e Entry) error {
	e.V, e.ParentDigest = 0, ""
	line, err := e.MarshalJSON()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := DecodeEntry(line); err != nil {
		return prefixed(path, err)
	}
	w.Write(line)
	return w.WriteByte('\n')
}
