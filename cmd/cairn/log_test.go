package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
)

// piFiles are pi session files kept by pkg/events' tests: name → the file
// its v3 export must equal.
var piFiles = map[string]string{
	"v3-branchy.jsonl": "v3-branchy.jsonl",
	"v3-coding.jsonl":  "v3-coding.jsonl",
	"v3-forked.jsonl":  "v3-forked.jsonl",
	"v1-linear.jsonl":  "v1-linear.v3.jsonl",
	"v2-hooks.jsonl":   "v2-hooks.v3.jsonl",
}

const piDir = "../../pkg/events/testdata/pi"

// cairn runs the binary's run function and returns its exit status, stdout
// and stderr.
func cairn(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := run(ctx, args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func mustCairn(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := cairn(t, args...)
	if code != 0 {
		t.Fatalf("cairn %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func TestImportExportRoundTrip(t *testing.T) {
	s := natstest.RunServer(t)
	url := s.ClientURL()
	for name, want := range piFiles {
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(piDir, name)
			id := strings.TrimSuffix(strings.ReplaceAll(name, ".", "-"), "-jsonl")
			got := mustCairn(t, "import", in, "--id", id, "--nats", url)
			if strings.TrimSpace(got) != id {
				t.Fatalf("import printed %q, want %q", got, id)
			}
			out := mustCairn(t, "export", id, "--nats", url, "--format", "pi")
			wantData, err := os.ReadFile(filepath.Join(piDir, want))
			if err != nil {
				t.Fatal(err)
			}
			// The export carries the id the session was imported as.
			h, _, err := events.ReadPiFile(bytes.NewReader(wantData))
			if err != nil {
				t.Fatal(err)
			}
			wantText := strings.Replace(string(wantData), `"id":"`+h.ID+`"`, `"id":"`+id+`"`, 1)
			// pi writes some fields in another order than Cairn's canonical
			// form: the export must be the same JSON, line by line.
			if diff := jsonLinesDiff(out, wantText); diff != "" {
				t.Fatalf("export differs from %s: %s", want, diff)
			}
			mustCairn(t, "audit", "verify", id, "--nats", url)
			if name != "v3-branchy.jsonl" {
				return
			}
			// Canonical in, byte-identical out.
			again := filepath.Join(t.TempDir(), "again.jsonl")
			if err := os.WriteFile(again, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			mustCairn(t, "import", again, "--id", id+"-2", "--nats", url)
			out2 := mustCairn(t, "export", id+"-2", "--nats", url)
			if want2 := strings.Replace(out, `"id":"`+id+`"`, `"id":"`+id+`-2"`, 1); out2 != want2 {
				t.Fatalf("second export differs:\n%s", firstDiff(out2, want2))
			}
		})
	}
}

// The file's own session id is kept when --id is not given, and an export
// of the same id is byte-identical to the file.
func TestImportKeepsTheFilesID(t *testing.T) {
	s := natstest.RunServer(t)
	in := filepath.Join(piDir, "v3-branchy.jsonl")
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := events.ReadPiFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(mustCairn(t, "import", in, "--nats", s.ClientURL())); got != h.ID {
		t.Fatalf("import printed %q, want %q", got, h.ID)
	}
	if diff := jsonLinesDiff(mustCairn(t, "export", h.ID, "--nats", s.ClientURL()), string(data)); diff != "" {
		t.Fatalf("export differs: %s", diff)
	}
	if code, _, errOut := cairn(t, "import", in, "--nats", s.ClientURL()); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("importing again: exit %d, %q; want 1 and 'already exists'", code, errOut)
	}
}

func TestImportExportLargeImage(t *testing.T) {
	s := natstest.RunServer(t)
	img := strings.Repeat("iVBORw0KGgoAAAANSUhEUg", 100_000) // 2.2 MB: over the max payload
	root := "a1"
	h := events.Entry{Type: events.EntrySession, Version: 3, ID: "big-image", Timestamp: "2026-02-01T10:00:00.000Z", Cwd: "/w"}
	entries := []events.Entry{{
		Type: events.EntryMessage, ID: root, Timestamp: "2026-02-01T10:00:01.000Z",
		Message: &events.Message{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{
			events.TextBlock("what is this?"), {Type: events.BlockImage, MimeType: "image/png", Data: img},
		}}},
	}}
	var file bytes.Buffer
	if err := events.WritePiFile(&file, h, entries); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	mustCairn(t, "import", path, "--nats", s.ClientURL())
	if out := mustCairn(t, "export", "big-image", "--nats", s.ClientURL()); out != file.String() {
		t.Fatalf("export of a large image differs (%d bytes, want %d)", len(out), file.Len())
	}
	jl := mustCairn(t, "export", "big-image", "--format", "jsonl", "--nats", s.ClientURL())
	if !strings.Contains(jl, img) || !strings.Contains(jl, `"parentDigest":"sha256:`) {
		t.Fatal("jsonl export lacks the image or the parent digest")
	}
}

func TestLogTreeAudit(t *testing.T) {
	s := natstest.RunServer(t)
	url := s.ClientURL()
	mustCairn(t, "import", filepath.Join(piDir, "v3-branchy.jsonl"), "--id", "br", "--nats", url)
	mustCairn(t, "import", filepath.Join(piDir, "v3-coding.jsonl"), "--id", "co", "--nats", url)

	out := mustCairn(t, "log", "br", "--nats", url)
	for _, want := range []string{"session", "thinking_level_change", "minimal", `user "Run the benchmarks`, `8233ee4a = "checkpoint"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%.2000s", want, out)
		}
	}
	js := mustCairn(t, "log", "br", "--json", "--nats", url)
	lines := strings.Split(strings.TrimSpace(js), "\n")
	if !strings.HasPrefix(lines[0], `{"seq":`) || !strings.Contains(lines[1], `"digest":"sha256:`) {
		t.Errorf("log --json line = %.200s", lines[0])
	}
	tree := mustCairn(t, "tree", "br", "--nats", url)
	if !strings.Contains(tree, "[checkpoint]") || !strings.HasPrefix(tree, "session br") || !strings.Contains(tree, "* 81c524ab") {
		t.Errorf("tree:\n%.2000s", tree)
	}
	// A branch shows as two children indented under the same parent.
	if strings.Count(tree, "\n") != len(lines) { // header line + one line per tree entry
		t.Errorf("tree has %d lines, want %d", strings.Count(tree, "\n"), len(lines))
	}

	audit := mustCairn(t, "audit", "verify", "--nats", url)
	if !strings.Contains(audit, "ok   br") || !strings.Contains(audit, "ok   co") {
		t.Fatalf("audit verify:\n%s", audit)
	}

	// Remove an entry from the middle of "co" behind the log's back.
	_, jsc := natstest.JetStream(t, s.Server)
	ctx := context.Background()
	st, err := jsc.Stream(ctx, "CAIRN_SESSIONS")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "cairn.session.default.co")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, m.Sequence-5); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cairn(t, "audit", "verify", "--nats", url)
	if code != 1 || !strings.Contains(out, "FAIL co") || !strings.Contains(out, "removed") || !strings.Contains(out, "ok   br") {
		t.Fatalf("audit after a removal: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "1 of 2 sessions failed") {
		t.Fatalf("stderr = %q", errOut)
	}
}

func TestLogCommandsRefuseBadInput(t *testing.T) {
	s := natstest.RunServer(t)
	url := s.ClientURL()
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"log", "x", "--server", "localhost:8080"}, 2, "--server"},
		{[]string{"log", "x", "--prefix", "other"}, 2, "--prefix applies with --nats only"},
		{[]string{"replay", "x", "--until", "0", "--nats", url}, 2, "starts at 1"},
		{[]string{"log", "bad id", "--nats", url}, 2, "session id"},
		{[]string{"export", "x", "--format", "xml", "--nats", url}, 2, "--format must be pi or jsonl"},
		{[]string{"tree", "nobody", "--nats", url}, 1, "does not exist"},
		{[]string{"import", "/does/not/exist.jsonl", "--nats", url}, 1, "no such file"},
		{[]string{"import", filepath.Join(piDir, "v3-coding.jsonl"), "--id", "a.b", "--nats", url}, 2, "session id"},
		{[]string{"audit", "verify", "a", "b", "--nats", url}, 2, "accepts at most 1"},
	}
	for _, c := range cases {
		code, _, errOut := cairn(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("cairn %s: exit %d %q; want %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.msg)
		}
	}
	mustCairn(t, "import", filepath.Join(piDir, "v3-coding.jsonl"), "--id", "one", "--nats", url)
	if code, _, errOut := cairn(t, "log", "nobody", "--nats", url); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("log of an unknown session: exit %d %q", code, errOut)
	}
}

// jsonLinesDiff compares two JSON Lines texts value by value and says
// where they first differ ("" if they do not).
func jsonLinesDiff(got, want string) string {
	gl, wl := strings.Split(strings.TrimSpace(got), "\n"), strings.Split(strings.TrimSpace(want), "\n")
	if len(gl) != len(wl) {
		return fmt.Sprintf("%d lines, want %d", len(gl), len(wl))
	}
	for i := range gl {
		var g, w any
		if err := json.Unmarshal([]byte(gl[i]), &g); err != nil {
			return fmt.Sprintf("line %d: %v", i+1, err)
		}
		if err := json.Unmarshal([]byte(wl[i]), &w); err != nil {
			return fmt.Sprintf("line %d of the file: %v", i+1, err)
		}
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("line %d\n got: %s\nwant: %s", i+1, clip(gl[i]), clip(wl[i]))
		}
	}
	return ""
}

// firstDiff shows where two texts first differ.
func firstDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			return "line " + strconv.Itoa(i+1) + "\n got: " + clip(gl[i]) + "\nwant: " + clip(wl[i])
		}
	}
	return "lengths differ: " + strconv.Itoa(len(gl)) + " vs " + strconv.Itoa(len(wl)) + " lines"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
