package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// `cairn run` works on the current directory itself (DESIGN §7, issue 29).

const runScript = `{
  "rules": [
    {"match": {"lastRole": "user", "contains": "list the files"}, "reply": {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"toolCalls": [{"name": "write", "arguments": {"path": "agent-note.txt", "content": "seen"}}]}},
    {"match": {"lastRole": "toolResult", "tool": "write"}, "reply": {"text": "listed and wrote"}},
    {"reply": {"text": "ok"}}
  ]
}`

// cairnRunIn runs `cairn run args...` in dir against server and returns
// its combined output and error.
func cairnRunIn(t *testing.T, dir, server, script string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), append([]string{"run", "--script", script, "--model", "scripted/e2e"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"CAIRN_SERVER=" + server, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + t.TempDir(), "XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// listing is every path under dir, sorted.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func writeScript(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(runScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Embedded: no server answers; the agent lists the files of the current
// directory, writes one there, and nothing else appears.
func TestE2ERunWorksOnTheCurrentDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker-file.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	out, err := cairnRunIn(t, dir, "http://127.0.0.1:1", writeScript(t), "list the files")
	if err != nil || !strings.Contains(out, "listed and wrote") {
		t.Fatalf("cairn run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "marker-file.txt") {
		t.Fatalf("the listing does not show the current directory's files:\n%s", out)
	}
	if !strings.Contains(out, "embedded platform") || !strings.Contains(out, "workspace "+dir) {
		t.Fatalf("cairn run did not say which platform and workspace it used:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "agent-note.txt")); err != nil || string(b) != "seen" {
		t.Fatalf("the written file: %q %v", b, err)
	}
	want := append(slices.Clone(before), "agent-note.txt")
	slices.Sort(want)
	if got := listing(t, dir); !slices.Equal(got, want) {
		t.Fatalf("the directory holds %v after the run, want %v", got, want)
	}
}

// Against a cairn up: inside its tenant's workspace root the session works
// there; outside it, cairn run refuses and nothing is created.
func TestE2ERunAgainstAServer(t *testing.T) {
	u := startUp(t)
	script := writeScript(t)
	proj := filepath.Join(u.data, "workspaces", "default", "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "marker-file.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := cairnRunIn(t, proj, u.url, script, "please list files")
	if err != nil || !strings.Contains(out, "platform at "+u.url) || !strings.Contains(out, "workspace "+proj) {
		t.Fatalf("cairn run inside the root: %v\n%s", err, out)
	}
	outside := t.TempDir()
	before := listing(t, outside)
	out, err = cairnRunIn(t, outside, u.url, script, "list the files")
	if err == nil || !strings.Contains(out, "the current directory "+outside) || !strings.Contains(out, "outside the tenant's workspace root") {
		t.Fatalf("cairn run outside the root: %v\n%s", err, out)
	}
	if got := listing(t, outside); !slices.Equal(got, before) {
		t.Fatalf("a refused run left %v", got)
	}
}

// Bad input: no prompt (usage, exit 2), an unreadable current directory,
// a data directory; each a clear error, nothing created.
func TestE2ERunBadInput(t *testing.T) {
	script := writeScript(t)
	dir := t.TempDir()
	out, err := cairnRunIn(t, dir, "http://127.0.0.1:1", script)
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(out, "run takes the prompt") {
		t.Fatalf("no argument: %v\n%s", err, out)
	}
	locked := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(locked, 0o300); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	if os.Geteuid() != 0 {
		out, err = cairnRunIn(t, locked, "http://127.0.0.1:1", script, "list the files")
		if err == nil || !strings.Contains(out, "cannot be read") {
			t.Fatalf("unreadable directory: %v\n%s", err, out)
		}
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "credentials"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(adminKeyFile(data), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	out, err = cairnRunIn(t, filepath.Join(data, "credentials"), "http://127.0.0.1:1", script, "list the files")
	if err == nil || !strings.Contains(out, "inside the Cairn data directory") {
		t.Fatalf("inside a data directory: %v\n%s", err, out)
	}
	if got := listing(t, dir); !slices.Equal(got, before) {
		t.Fatalf("a refused run created %v", got)
	}
}
