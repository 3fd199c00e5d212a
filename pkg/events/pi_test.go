package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// jsonLines parses every non-blank line of data as a JSON value.
func jsonLines(t *testing.T, data []byte) []any {
	t.Helper()
	var out []any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d: %v", len(out)+1, err)
		}
		out = append(out, v)
	}
	return out
}

func readPi(t *testing.T, data []byte) (Entry, []Entry) {
	t.Helper()
	h, entries, err := ReadPiFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return h, entries
}

func writePi(t *testing.T, h Entry, entries []Entry) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WritePiFile(&b, h, entries); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A v3 file read into Cairn's types and written again is the same file, line
// for line, compared as parsed JSON values; and the canonical form it gives
// is byte-stable.
func TestPiV3RoundTrip(t *testing.T) {
	writePiSessions(t)
	files, _ := filepath.Glob(filepath.Join(piDir, "v3-*.jsonl"))
	if len(files) < 3 {
		t.Fatalf("want at least 3 v3 sessions in %s, found %v", piDir, files)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			h, entries := readPi(t, in)
			if len(entries) < 250 {
				t.Fatalf("only %d entries; the test sessions are meant to be realistic", len(entries))
			}
			out := writePi(t, h, entries)
			want, got := jsonLines(t, in), jsonLines(t, out)
			if len(got) != len(want) {
				t.Fatalf("wrote %d lines, read %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("line %d changed:\n got %s\nwant %s", i+1, sprint(got[i]), sprint(want[i]))
				}
			}
			h2, entries2 := readPi(t, out)
			if again := writePi(t, h2, entries2); !bytes.Equal(again, out) {
				t.Fatal("writing the file read back gives different bytes")
			}
		})
	}
}

// A v1 file becomes a v3 tree: deterministic ids, a parent chain in file
// order, compactions pointing at ids; every other field unchanged.
func TestPiV1Migration(t *testing.T) {
	writePiSessions(t)
	in, err := os.ReadFile(filepath.Join(piDir, "v1-linear.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h, entries := readPi(t, in)
	if h.Version != PiVersion {
		t.Errorf("header version %d, want %d", h.Version, PiVersion)
	}
	orig := jsonLines(t, in)
	if len(entries) != len(orig)-1 || len(entries) < 250 {
		t.Fatalf("%d entries from %d lines", len(entries), len(orig))
	}
	if err := CheckTree(entries); err != nil {
		t.Fatal(err)
	}
	compactions := 0
	for i, e := range entries {
		pos := i + 1 // the header is position 0
		if want := DeriveID("pi-v1", h.ID, itoa(pos)); e.ID != want {
			t.Fatalf("entry %d id %q, want %q", i, e.ID, want)
		}
		switch {
		case i == 0 && e.ParentID != nil:
			t.Fatalf("first entry has parent %q", *e.ParentID)
		case i > 0 && (e.ParentID == nil || *e.ParentID != entries[i-1].ID):
			t.Fatalf("entry %d parent %v, want %q", i, e.ParentID, entries[i-1].ID)
		}
		o := orig[pos].(map[string]any)
		if e.Type == EntryCompaction {
			compactions++
			idx := int(o["firstKeptEntryIndex"].(float64))
			if e.FirstKeptEntryID != entries[idx-1].ID {
				t.Errorf("compaction %d keeps %q, want the id of position %d", i, e.FirstKeptEntryID, idx)
			}
			if _, ok := e.Extra["firstKeptEntryIndex"]; ok {
				t.Errorf("compaction %d still has firstKeptEntryIndex", i)
			}
		}
		// Apart from the migrated fields, the entry is what the file said.
		b, _ := e.MarshalJSON()
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for _, k := range []string{"id", "parentId", "firstKeptEntryId"} {
			delete(got, k)
		}
		delete(o, "firstKeptEntryIndex")
		if !reflect.DeepEqual(got, o) {
			t.Fatalf("entry %d changed:\n got %s\nwant %s", i, sprint(got), sprint(o))
		}
	}
	if compactions == 0 {
		t.Error("the v1 session has no compaction")
	}
	// Conversion is reproducible: the output is the committed file.
	out := writePi(t, h, entries)
	checkGoldenFile(t, filepath.Join(piDir, "v1-linear.v3.jsonl"), out)
}

// A v2 file's hookMessage messages become custom messages; nothing else
// changes but the header's version.
func TestPiV2Migration(t *testing.T) {
	writePiSessions(t)
	in, err := os.ReadFile(filepath.Join(piDir, "v2-hooks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h, entries := readPi(t, in)
	out := writePi(t, h, entries)
	want, got := jsonLines(t, in), jsonLines(t, out)
	want[0].(map[string]any)["version"] = float64(3)
	hooks := 0
	for i := range want {
		w := want[i].(map[string]any)
		if m, ok := w["message"].(map[string]any); ok && m["role"] == "hookMessage" {
			m["role"] = RoleCustom
			hooks++
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("line %d:\n got %s\nwant %s", i+1, sprint(got[i]), sprint(want[i]))
		}
	}
	if hooks == 0 {
		t.Fatal("the v2 session has no hookMessage")
	}
	checkGoldenFile(t, filepath.Join(piDir, "v2-hooks.v3.jsonl"), out)
}

func checkGoldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("output differs from %s (run go test -update if the change is intended)", path)
	}
}

// Zero-valued optional fields are normalised away: this is the one way a
// round trip may change a pi file, and it changes no value pi reads.
func TestPiRoundTripNormalisesEmptyOptionals(t *testing.T) {
	in := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-04T05:06:07.089Z","cwd":""}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-04T05:06:07.089Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","api":"x","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","errorMessage":"","timestamp":1}}
`
	h, entries := readPi(t, []byte(in))
	out := string(writePi(t, h, entries))
	if strings.Contains(out, `"cwd"`) || strings.Contains(out, `"errorMessage"`) {
		t.Fatalf("empty optional fields written back:\n%s", out)
	}
}

func TestReadPiFileErrors(t *testing.T) {
	const hdr = `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-04T05:06:07.089Z","cwd":"/w"}`
	msg := func(id, parent string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-03-04T05:06:07.089Z","message":{"role":"user","content":"hi","timestamp":1}}`
	}
	cases := []struct {
		name  string
		in    string
		line  int
		field string
	}{
		{"empty file", "", 1, "type"},
		{"only blank lines", "\n  \n", 1, "type"},
		{"no header", msg("a", ""), 1, "type"},
		{"header not an object", `"session"`, 1, ""},
		{"future version", strings.Replace(hdr, `"version":3`, `"version":4`, 1), 1, "version"},
		{"version a string", strings.Replace(hdr, `"version":3`, `"version":"3"`, 1), 1, "version"},
		{"invalid session id", strings.Replace(hdr, `"s1"`, `"s 1"`, 1), 1, "id"},
		{"malformed line", hdr + "\n" + msg("a", "") + "\n{not json\n", 3, ""},
		{"blank lines count", hdr + "\n\n\n" + `{"type":"bogus","id":"b","parentId":null,"timestamp":"2026-03-04T05:06:07.089Z"}`, 4, "type"},
		{"second header", hdr + "\n" + hdr, 2, "type"},
		{"bad block", hdr + "\n" + strings.Replace(msg("a", ""), `"hi"`, `[{"type":"video"}]`, 1), 2, "message.content[0].type"},
		{"duplicate id", hdr + "\n" + msg("a", "") + "\n" + msg("a", "a"), 3, "id"},
		{"parent later", hdr + "\n" + msg("a", "b") + "\n" + msg("b", ""), 2, "parentId"},
		{"parent unknown", hdr + "\n" + msg("a", "") + "\n" + msg("b", "zz"), 3, "parentId"},
		{"hookMessage in v3", hdr + "\n" + strings.Replace(msg("a", ""), `"user"`, `"hookMessage"`, 1), 2, "message.role"},
		{"v1 compaction index forward", `{"type":"session","id":"s1","timestamp":"2026-03-04T05:06:07.089Z"}` + "\n" + `{"type":"compaction","timestamp":"2026-03-04T05:06:07.089Z","summary":"s","firstKeptEntryIndex":5,"tokensBefore":1}`, 2, "firstKeptEntryIndex"},
		{"v1 compaction index a string", `{"type":"session","id":"s1","timestamp":"2026-03-04T05:06:07.089Z"}` + "\n" + `{"type":"message","timestamp":"2026-03-04T05:06:07.089Z","message":{"role":"user","content":"hi"}}` + "\n" + `{"type":"compaction","timestamp":"2026-03-04T05:06:07.089Z","summary":"s","firstKeptEntryIndex":"1","tokensBefore":1}`, 3, "firstKeptEntryIndex"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadPiFile(strings.NewReader(c.in))
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v (%T), want a *LineError", err, err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v does not wrap a *FieldError", err)
			}
			if le.Line != c.line || fe.Field != c.field {
				t.Fatalf("err = %q: line %d field %q, want line %d field %q", err, le.Line, fe.Field, c.line, c.field)
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("err = %q does not start with the line", err)
			}
		})
	}
}

// A v1 file without ids but with a header-only session, with CRLF line ends.
func TestReadPiFileV1Small(t *testing.T) {
	in := "{\"type\":\"session\",\"id\":\"s1\",\"timestamp\":\"2026-03-04T05:06:07.089Z\",\"cwd\":\"/w\"}\r\n" +
		"{\"type\":\"message\",\"timestamp\":\"2026-03-04T05:06:08.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\r\n" +
		"{\"type\":\"message\",\"timestamp\":\"2026-03-04T05:06:09.000Z\",\"message\":{\"role\":\"hookMessage\",\"customType\":\"x\",\"content\":\"note\",\"display\":false,\"timestamp\":2}}\r\n" +
		"{\"type\":\"compaction\",\"timestamp\":\"2026-03-04T05:06:10.000Z\",\"summary\":\"s\",\"firstKeptEntryIndex\":2,\"tokensBefore\":9}\r\n"
	h, entries := readPi(t, []byte(in))
	if h.ID != "s1" || h.Version != 3 || len(entries) != 3 {
		t.Fatalf("header %+v, %d entries", h, len(entries))
	}
	if entries[1].Message.Role != RoleCustom || *entries[1].ParentID != entries[0].ID {
		t.Fatalf("entry 1: %+v", entries[1])
	}
	if entries[2].FirstKeptEntryID != entries[1].ID {
		t.Fatalf("firstKeptEntryId %q, want %q", entries[2].FirstKeptEntryID, entries[1].ID)
	}
}

func TestWritePiFile(t *testing.T) {
	h := exampleEntry(EntrySession)
	leaf := exampleEntry(EntryLeaf) // a Cairn entry with v and parentDigest set
	leaf.ParentID = nil
	m := exampleEntry(EntryMessage)
	msg := exampleMessages[RoleUser]
	m.Message, m.ID, m.ParentID, m.V, m.ParentDigest = &msg, "m1", &leaf.ID, 1, "sha256:1"
	var b bytes.Buffer
	if err := WritePiFile(&b, h, []Entry{leaf, m}); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"v":`, `"parentDigest"`} {
		if strings.Contains(b.String(), field) {
			t.Errorf("pi file has Cairn's %s field:\n%s", field, b.String())
		}
	}
	if lines := strings.Count(b.String(), "\n"); lines != 3 {
		t.Errorf("%d lines, want 3", lines)
	}
	h2, entries := readPi(t, b.Bytes())
	if h2.V != 0 || h2.Version != PiVersion || len(entries) != 2 || entries[1].Message.CommandID != msg.CommandID {
		t.Fatalf("read back %+v %+v", h2, entries)
	}

	bad := []struct {
		name    string
		header  Entry
		entries []Entry
		field   string
	}{
		{"header not a session", m, nil, "header.type"},
		{"parent not earlier", h, []Entry{m, leaf}, "entries[0].parentId"},
		{"duplicate id", h, []Entry{leaf, leaf}, "entries[1].id"},
		{"invalid entry", h, []Entry{{Type: EntryMessage, ID: "x", Timestamp: exampleTime}}, "entries[0].message"},
		{"header among entries", h, []Entry{h}, "entries[0].type"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			err := WritePiFile(&bytes.Buffer{}, c.header, c.entries)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Fatalf("err = %v, want field %q", err, c.field)
			}
		})
	}
}

// The generated sessions hold what the brief of the interop asks for, so the
// round-trip tests above mean something.
func TestPiSessionsAreRealistic(t *testing.T) {
	writePiSessions(t)
	files, _ := filepath.Glob(filepath.Join(piDir, "v3-*.jsonl"))
	seen := map[string]int{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, entries := readPi(t, data)
		for i, e := range entries {
			seen[e.Type]++
			if len(e.Extra) > 0 {
				seen["extra field"]++
			}
			switch {
			case i > 0 && e.ParentID == nil:
				seen["new root"]++
			case i > 0 && *e.ParentID != entries[i-1].ID:
				seen["branch"]++
			}
			if e.Message == nil {
				continue
			}
			seen["role "+e.Message.Role]++
			for _, b := range e.Message.Content.Blocks {
				seen["block "+b.Type]++
				if b.ThinkingSignature != "" {
					seen["thinking signature"]++
				}
			}
			if len(e.Message.Extra) > 0 {
				seen["extra field"]++
			}
		}
	}
	for _, want := range []string{EntryMessage, EntryModelChange, EntryThinkingLevelChange, EntryCompaction,
		EntryBranchSummary, EntryLabel, EntryCustom, EntryCustomMessage, EntrySessionInfo,
		"role user", "role assistant", "role toolResult", "role bashExecution",
		"block text", "block image", "block thinking", "block toolCall", "thinking signature",
		"branch", "new root", "extra field"} {
		if seen[want] == 0 {
			t.Errorf("no %s in the v3 sessions", want)
		}
	}
	t.Logf("v3 sessions: %v", seen)
}
