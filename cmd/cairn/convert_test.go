package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

const piTestdata = "../../pkg/events/testdata/pi"

func convert(t *testing.T, in string) (out []byte, stdout string) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "out.jsonl")
	code, stdout, stderr := runCairn(t, "convert", in, dst)
	if code != 0 {
		t.Fatalf("cairn convert %s: exit %d, stderr %q", in, code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr %q on success", stderr)
	}
	out, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	return out, stdout
}

func parseLines(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		out = append(out, m)
	}
	return out
}

// A v1 session converts to a v3 tree: unique ids, every parentId names an
// earlier entry, the entries in file order.
func TestConvertV1(t *testing.T) {
	in := filepath.Join(piTestdata, "v1-linear.jsonl")
	out, stdout := convert(t, in)
	src, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	orig, got := parseLines(t, src), parseLines(t, out)
	if len(got) != len(orig) || len(got) < 250 {
		t.Fatalf("%d lines out, %d in", len(got), len(orig))
	}
	if !strings.Contains(stdout, "converted "+strconv.Itoa(len(orig)-1)+" entries") {
		t.Errorf("stdout %q", stdout)
	}
	if got[0]["type"] != "session" || got[0]["version"] != float64(3) {
		t.Fatalf("header %v", got[0])
	}
	seen := map[string]bool{}
	for i, e := range got[1:] {
		id, _ := e["id"].(string)
		if id == "" || seen[id] {
			t.Fatalf("entry %d: id %q missing or repeated", i, id)
		}
		parent, hasParent := e["parentId"]
		if !hasParent {
			t.Fatalf("entry %d has no parentId", i)
		}
		if p, ok := parent.(string); ok && !seen[p] {
			t.Fatalf("entry %d: parent %q is not an earlier entry", i, p)
		}
		if i > 0 && parent != got[i]["id"] {
			t.Fatalf("entry %d: parent %v, want the previous entry %v (v1 is linear)", i, parent, got[i]["id"])
		}
		seen[id] = true
		// Order preserved: each entry is the input's entry at the same place.
		if e["timestamp"] != orig[i+1]["timestamp"] || e["type"] != orig[i+1]["type"] {
			t.Fatalf("entry %d is not the input's entry %d", i, i)
		}
	}
	// Converting again gives the same bytes: ids are derived, not random.
	if again, _ := convert(t, in); !bytes.Equal(again, out) {
		t.Fatal("two conversions of the same v1 file differ")
	}
}

// A v3 session comes out as the same JSON values, line for line.
func TestConvertV3RoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(piTestdata, "v3-*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no v3 sessions in testdata")
	}
	for _, in := range files {
		t.Run(filepath.Base(in), func(t *testing.T) {
			out, _ := convert(t, in)
			src, _ := os.ReadFile(in)
			want, got := parseLines(t, src), parseLines(t, out)
			if !reflect.DeepEqual(got, want) {
				t.Fatal("converting a v3 session changed it")
			}
		})
	}
}

func TestConvertV2(t *testing.T) {
	out, _ := convert(t, filepath.Join(piTestdata, "v2-hooks.jsonl"))
	if bytes.Contains(out, []byte(`"hookMessage"`)) {
		t.Fatal("hookMessage survived the conversion")
	}
	h, entries, err := events.ReadPiFile(bytes.NewReader(out))
	if err != nil || h.Version != 3 || len(entries) < 250 {
		t.Fatalf("read back: %v, version %d, %d entries", err, h.Version, len(entries))
	}
}

// OUT may be IN: the file is replaced atomically and keeps its permissions.
func TestConvertInPlace(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(piTestdata, "v1-linear.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, src, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if code, _, stderr := runCairn(t, "convert", path, path); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(piTestdata, "v1-linear.v3.jsonl"))
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, want) {
		t.Fatal("in-place conversion differs from the expected v3 file")
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o640 {
		t.Fatalf("converted file mode %v (%v), want the input's -rw-r-----", info.Mode(), err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(tmps) != 0 {
		t.Fatalf("temporary files left: %v", tmps)
	}
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hdr := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-04T05:06:07.089Z","cwd":"/w"}` + "\n"
	badRole := write("bad-role.jsonl", hdr+`{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-04T05:06:07.089Z","message":{"role":"robot","content":"hi"}}`+"\n")
	dangling := write("dangling.jsonl", hdr+`{"type":"label","id":"a","parentId":"zz","timestamp":"2026-03-04T05:06:07.089Z","targetId":"x"}`+"\n")
	out := filepath.Join(dir, "out.jsonl")

	cases := []struct {
		name string
		args []string
		code int
		want []string // substrings of the one stderr line
	}{
		{"bad role", []string{"convert", badRole, out}, 1, []string{badRole, "line 2", "message.role", `"robot"`}},
		{"dangling parent", []string{"convert", dangling, out}, 1, []string{"line 2", "parentId", `"zz"`}},
		{"missing input", []string{"convert", filepath.Join(dir, "nope.jsonl"), out}, 1, []string{"nope.jsonl"}},
		{"output dir missing", []string{"convert", filepath.Join(piTestdata, "v3-forked.jsonl"), filepath.Join(dir, "no", "out.jsonl")}, 1, []string{"out.jsonl"}},
		{"one argument", []string{"convert", badRole}, 2, []string{"accepts 2 arg(s)"}},
		{"no arguments", []string{"convert"}, 2, []string{"accepts 2 arg(s)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCairn(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not mention %q", stderr, w)
				}
			}
			if stdout != "" {
				t.Errorf("stdout %q on failure", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written despite the failure", out)
			}
		})
	}
}
