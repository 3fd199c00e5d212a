package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

func TestWriteCreatesParentsAndOverwrites(t *testing.T) {
	s, ws := newSet(t)
	r := mustCall(t, s, "write", map[string]any{"path": "a/b/c.txt", "content": "hello"})
	wantContains(t, text(r), "Successfully wrote 5 bytes to a/b/c.txt")
	var d WriteDetails
	decodeDetails(t, r, &d)
	if !d.Created || d.Bytes != 5 {
		t.Fatalf("details %+v", d)
	}
	if got := readFile(t, ws, "a/b/c.txt"); got != "hello" {
		t.Fatalf("content %q", got)
	}
	r = mustCall(t, s, "write", map[string]any{"path": "a/b/c.txt", "content": "hi"})
	decodeDetails(t, r, &d)
	if d.Created {
		t.Fatal("overwrite reported as created")
	}
	if got := readFile(t, ws, "a/b/c.txt"); got != "hi" {
		t.Fatalf("overwrite left %q", got)
	}
}

func TestWriteKeepsMode(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "run.sh", "old")
	if err := os.Chmod(filepath.Join(ws, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustCall(t, s, "write", map[string]any{"path": "run.sh", "content": "#!/bin/sh\n"})
	fi, err := os.Stat(filepath.Join(ws, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
}

func TestWriteThroughSymlinkInside(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "real.txt", "old")
	if err := os.Symlink(filepath.Join(ws, "real.txt"), filepath.Join(ws, "alias")); err != nil {
		t.Fatal(err)
	}
	mustCall(t, s, "write", map[string]any{"path": "alias", "content": "new"})
	if got := readFile(t, ws, "real.txt"); got != "new" {
		t.Fatalf("target has %q", got)
	}
}

func TestWriteErrors(t *testing.T) {
	s, ws := newSet(t)
	if err := os.Mkdir(filepath.Join(ws, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := call(t, s, "write", map[string]any{"path": "d", "content": "x"})
	if err != nil || !r.IsError || !strings.Contains(text(r), "d is a directory") {
		t.Fatalf("write to dir: %v %q", err, text(r))
	}
	_, err = call(t, s, "write", `{"path":"x"}`)
	if !errors.Is(err, events.ErrInvalid) || !strings.Contains(err.Error(), "content: is required") {
		t.Fatalf("missing content: %v", err)
	}
}

func TestWriteEmptyContent(t *testing.T) {
	s, ws := newSet(t)
	mustCall(t, s, "write", map[string]any{"path": "empty", "content": ""})
	if got := readFile(t, ws, "empty"); got != "" {
		t.Fatalf("got %q", got)
	}
}
