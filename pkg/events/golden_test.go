package events

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files and generated pi sessions in testdata")

// goldenCase is one golden file: encode gives the canonical bytes of the Go
// example; roundTrip decodes bytes and encodes the result again.
type goldenCase struct {
	file      string // under testdata/golden
	encode    func() ([]byte, error)
	roundTrip func([]byte) ([]byte, error)
	same      func([]byte) error // decoded value equals the example
}

func goldenCases() []goldenCase {
	var cases []goldenCase
	for name, e := range exampleEntries() {
		cases = append(cases, goldenCase{
			file:   "entry/" + name + ".json",
			encode: e.MarshalJSON,
			roundTrip: func(b []byte) ([]byte, error) {
				d, err := DecodeEntry(b)
				if err != nil {
					return nil, err
				}
				return d.MarshalJSON()
			},
			same: func(b []byte) error {
				d, err := DecodeEntry(b)
				return sameValue(d, e, err)
			},
		})
	}
	for role, m := range exampleMessages {
		cases = append(cases, goldenCase{
			file:   "message/" + role + ".json",
			encode: m.MarshalJSON,
			roundTrip: func(b []byte) ([]byte, error) {
				var d Message
				if err := json.Unmarshal(b, &d); err != nil {
					return nil, err
				}
				return d.MarshalJSON()
			},
			same: func(b []byte) error {
				var d Message
				return sameValue(d, m, json.Unmarshal(b, &d))
			},
		})
	}
	for typ, blk := range exampleBlocks {
		cases = append(cases, goldenCase{
			file:   "block/" + typ + ".json",
			encode: blk.MarshalJSON,
			roundTrip: func(b []byte) ([]byte, error) {
				var d Block
				if err := json.Unmarshal(b, &d); err != nil {
					return nil, err
				}
				return d.MarshalJSON()
			},
			same: func(b []byte) error {
				var d Block
				return sameValue(d, blk, json.Unmarshal(b, &d))
			},
		})
	}
	for name, c := range exampleCommands() {
		cases = append(cases, goldenCase{
			file:   "command/" + name + ".json",
			encode: c.MarshalJSON,
			roundTrip: func(b []byte) ([]byte, error) {
				d, err := DecodeCommand(b)
				if err != nil {
					return nil, err
				}
				return d.MarshalJSON()
			},
			same: func(b []byte) error {
				d, err := DecodeCommand(b)
				return sameValue(d, c, err)
			},
		})
	}
	for typ, ev := range exampleEvents() {
		cases = append(cases, goldenCase{
			file:   "event/" + typ + ".json",
			encode: ev.Encode,
			roundTrip: func(b []byte) ([]byte, error) {
				d, err := DecodeEvent(b)
				if err != nil {
					return nil, err
				}
				return d.Encode()
			},
			same: func(b []byte) error {
				d, err := DecodeEvent(b)
				return sameValue(d, ev, err)
			},
		})
	}
	cases = append(cases, goldenCase{
		file:   "toolcall.json",
		encode: exampleToolCall.Encode,
		roundTrip: func(b []byte) ([]byte, error) {
			d, err := DecodeToolCall(b)
			if err != nil {
				return nil, err
			}
			return d.Encode()
		},
		same: func(b []byte) error {
			d, err := DecodeToolCall(b)
			return sameValue(d, exampleToolCall, err)
		},
	}, goldenCase{
		file:   "toolresult.json",
		encode: exampleToolResult.Encode,
		roundTrip: func(b []byte) ([]byte, error) {
			d, err := DecodeToolResult(b)
			if err != nil {
				return nil, err
			}
			return d.Encode()
		},
		same: func(b []byte) error {
			d, err := DecodeToolResult(b)
			return sameValue(d, exampleToolResult, err)
		},
	})
	sort.Slice(cases, func(i, j int) bool { return cases[i].file < cases[j].file })
	return cases
}

func sameValue(got, want any, err error) error {
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(got, want) {
		return &FieldError{Problem: "decoded value differs from the example:\n got " + sprint(got) + "\nwant " + sprint(want)}
	}
	return nil
}

func sprint(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const goldenDir = "testdata/golden"

// TestGolden checks that every golden file is the canonical encoding of its
// example, that decoding it gives the example back, and that decode→encode
// reproduces it byte for byte. Run with -update to rewrite the files.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(goldenDir, c.file)
			want, err := c.encode()
			if err != nil {
				t.Fatalf("encode example: %v", err)
			}
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(want, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			file = bytes.TrimSuffix(file, []byte("\n"))
			if !bytes.Equal(file, want) {
				t.Errorf("the example encodes differently from %s:\n got %s\nfile %s", path, want, file)
			}
			got, err := c.roundTrip(file)
			if err != nil {
				t.Fatalf("decode %s: %v", path, err)
			}
			if !bytes.Equal(got, file) {
				t.Errorf("decode→encode is not byte-stable:\n got %s\nwant %s", got, file)
			}
			if err := c.same(file); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestGoldenCoverage checks that the golden files cover every entry type,
// role, block type, command type and event type, and that no file is stale.
func TestGoldenCoverage(t *testing.T) {
	entries := exampleEntries()
	for _, typ := range allEntryTypes {
		if typ == EntryMessage {
			continue
		}
		if _, ok := entries[typ]; !ok {
			t.Errorf("no golden entry of type %q", typ)
		}
	}
	for _, role := range allRoles {
		if _, ok := entries[EntryMessage+"-"+role]; !ok {
			t.Errorf("no golden message entry with role %q", role)
		}
		if _, ok := exampleMessages[role]; !ok {
			t.Errorf("no golden message with role %q", role)
		}
	}
	for _, typ := range allBlockTypes {
		if _, ok := exampleBlocks[typ]; !ok {
			t.Errorf("no golden block of type %q", typ)
		}
	}
	cmds := exampleCommands()
	for _, typ := range allCommandTypes {
		if _, ok := cmds[typ]; !ok {
			t.Errorf("no golden command of type %q", typ)
		}
	}
	evs := exampleEvents()
	for typ := range eventTypes {
		if _, ok := evs[typ]; !ok {
			t.Errorf("no golden event of type %q", typ)
		}
	}
	// Every known type decodes; the lists above are complete if every other
	// type name is refused.
	for _, typ := range allEntryTypes {
		e := exampleEntry(typ)
		if typ == EntryMessage {
			m := exampleMessages[RoleUser]
			e.Message = &m
		}
		b, _ := e.MarshalJSON()
		if _, err := DecodeEntry(b); err != nil {
			t.Errorf("entry type %q: %v", typ, err)
		}
	}

	var want []string
	for _, c := range goldenCases() {
		want = append(want, c.file)
	}
	var have []string
	err := filepath.WalkDir(goldenDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(goldenDir, path)
		have = append(have, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Errorf("golden files on disk differ from the examples:\n disk %v\n want %v", have, want)
	}
}
