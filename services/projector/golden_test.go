package projector

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/cockroachdb/pebble/v2/vfs"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden with the actual output")

// A golden file is a sequence of blocks:
//
//	# comments
//	command args...
//	input lines...
//	----
//	expected output lines
//	(blank line)
//
// Commands:
//
//	apply          input: "<subject> <entry JSON>" per line, given stream
//	               sequences 1, 2, ... in file order; output: the applied sequence
//	keys [PREFIX]  output: every key (with PREFIX) and its value
//	get PATH       output: the status and the body of a query (JSON indented)
//
// Every file runs with batch sizes 1, 10 and 100 and must give the same
// output with each.
type goldenBlock struct {
	comments []string
	cmd      string
	input    []string
	expected string
}

func parseGolden(t *testing.T, path string) []goldenBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Errorf("close f: %v", err)
		}
	}()
	var blocks []goldenBlock
	var cur *goldenBlock
	var pre []string
	state := 0 // 0 between blocks, 1 input, 2 expected
	var exp []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch state {
		case 0:
			if line == "" || strings.HasPrefix(line, "#") {
				pre = append(pre, line)
				continue
			}
			blocks = append(blocks, goldenBlock{comments: pre, cmd: line})
			cur = &blocks[len(blocks)-1]
			pre = nil
			state = 1
		case 1:
			if line == "----" {
				state, exp = 2, nil
				continue
			}
			cur.input = append(cur.input, line)
		case 2:
			if line == "" {
				cur.expected = strings.Join(exp, "\n")
				state = 0
				pre = append(pre, line)
				continue
			}
			exp = append(exp, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	switch state {
	case 1:
		t.Fatalf("%s: block %q has no ---- line", path, cur.cmd)
	case 2:
		cur.expected = strings.Join(exp, "\n")
	}
	return blocks
}

func writeGolden(t *testing.T, path string, blocks []goldenBlock, actual []string) {
	var b strings.Builder
	for i, bl := range blocks {
		for _, c := range bl.comments {
			b.WriteString(c + "\n")
		}
		b.WriteString(bl.cmd + "\n")
		for _, in := range bl.input {
			b.WriteString(in + "\n")
		}
		b.WriteString("----\n" + actual[i] + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			blocks := parseGolden(t, path)
			var first []string
			for _, batch := range []int{1, 10, 100} {
				actual := runGolden(t, blocks, batch)
				if first == nil {
					first = actual
				}
				for i, bl := range blocks {
					if actual[i] != first[i] {
						t.Fatalf("batch size %d gives other output for %q than batch size 1:\n%s\n---- batch 1:\n%s", batch, bl.cmd, actual[i], first[i])
					}
					if !*update && actual[i] != bl.expected {
						t.Errorf("%s: %q with batch size %d:\n---- got:\n%s\n---- want:\n%s", path, bl.cmd, batch, actual[i], bl.expected)
					}
				}
			}
			if *update {
				writeGolden(t, path, blocks, first)
			}
		})
	}
}

// testProjector returns a projector over an in-memory database, without NATS.
func testProjector(t testing.TB, fs vfs.FS) *Projector {
	t.Helper()
	if fs == nil {
		fs = vfs.NewMem()
	}
	db, err := store.Open("db", store.Options{FS: fs, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	})
	return &Projector{cfg: Config{Dir: "db"}.withDefaults(), live: newLive(db)}
}

func runGolden(t *testing.T, blocks []goldenBlock, batch int) []string {
	t.Helper()
	p := testProjector(t, nil)
	w, err := p.live.current().NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("close w: %v", err)
		}
	}()
	h := p.Handler()
	var seq uint64
	var out []string
	for _, bl := range blocks {
		fields := strings.Fields(bl.cmd)
		switch fields[0] {
		case "apply":
			for _, in := range bl.input {
				subject, data, ok := strings.Cut(in, " ")
				if !ok {
					t.Fatalf("apply: line %q is not \"<subject> <entry>\"", in)
				}
				seq++
				if _, err := w.Apply(seq, subject, []byte(data)); err != nil {
					t.Fatalf("apply %d: %v", seq, err)
				}
				if w.Pending() >= batch {
					if err := w.Commit(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("applied through %d", w.Applied()))
		case "keys":
			prefix := ""
			if len(fields) > 1 {
				prefix = fields[1]
			}
			out = append(out, dumpKeys(t, p.live.current(), prefix))
		case "get":
			if len(fields) != 2 {
				t.Fatalf("get: want one path, got %q", bl.cmd)
			}
			out = append(out, query(t, h, fields[1]))
		default:
			t.Fatalf("unknown golden command %q", fields[0])
		}
	}
	return out
}

func dumpKeys(t testing.TB, db *store.DB, prefix string) string {
	t.Helper()
	var b strings.Builder
	_, err := db.Dump(func(k, v []byte) error {
		if !bytes.HasPrefix(k, []byte(prefix)) {
			return nil
		}
		ks := strings.ReplaceAll(string(k), "\x00", `\0`)
		vs := string(v)
		if string(k) == "meta/applied" {
			vs = fmt.Sprint(binary.BigEndian.Uint64(v))
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(ks + " " + vs)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() == 0 {
		return "(none)"
	}
	return b.String()
}

func query(t testing.TB, h http.Handler, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body := rec.Body.Bytes()
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		var buf bytes.Buffer
		if err := json.Indent(&buf, bytes.TrimSpace(body), "", "  "); err != nil {
			t.Fatalf("%s: body is not JSON: %v\n%s", path, err, body)
		}
		body = buf.Bytes()
	}
	return fmt.Sprintf("%d\n%s", rec.Code, strings.TrimRight(string(body), "\n"))
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
