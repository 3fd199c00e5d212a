package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func contextCancelled() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx, cancel
}

func TestFind(t *testing.T) {
	s, _ := grepFixture(t)
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "*.go"}, "a.go\nsrc/deep/c.go"},
		{map[string]any{"pattern": "**/*.go"}, "a.go\nsrc/deep/c.go"},
		{map[string]any{"pattern": "src/*"}, "src/b.ts\nsrc/deep/"},
		{map[string]any{"pattern": "*.{ts,dat}"}, "bin.dat\nsrc/b.ts"},
		{map[string]any{"pattern": "*", "path": "src"}, "src/b.ts\nsrc/deep/\nsrc/deep/c.go"},
		{map[string]any{"pattern": "config"}, "No files found matching pattern"}, // .git skipped
		{map[string]any{"pattern": ".*"}, ".hidden"},
	}
	for _, c := range cases {
		r := mustCall(t, s, "find", c.args)
		if got := text(r); got != c.want {
			t.Errorf("find %v:\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
	r := mustCall(t, s, "find", map[string]any{"pattern": "*", "limit": 2})
	wantContains(t, text(r), "[2 results limit reached. Use limit=4 for more, or refine the pattern.]")
	r, err := call(t, s, "find", map[string]any{"pattern": "*", "path": "a.go"})
	if err != nil || !r.IsError || text(r) != "Not a directory: a.go" {
		t.Fatalf("find in a file: %v %q", err, text(r))
	}
	_, err = call(t, s, "find", map[string]any{"pattern": "[x"})
	if err == nil || !strings.Contains(err.Error(), "pattern: malformed glob") {
		t.Fatalf("bad glob: %v", err)
	}
}

func TestLs(t *testing.T) {
	s, ws := grepFixture(t)
	writeFile(t, ws, "B.txt", "")
	if err := os.Symlink("src", filepath.Join(ws, "srclink")); err != nil {
		t.Fatal(err)
	}
	r := mustCall(t, s, "ls", map[string]any{})
	want := ".git/\n.hidden\na.go\nB.txt\nbin.dat\nsrc/\nsrclink/"
	if got := text(r); got != want {
		t.Fatalf("ls:\n%s\nwant\n%s", got, want)
	}
	r = mustCall(t, s, "ls", map[string]any{"path": "src", "limit": 1})
	if got := text(r); got != "b.ts\n\n[1 entries limit reached (2 in the directory). Use limit=2 for more.]" {
		t.Fatalf("ls limit: %q", got)
	}
	if err := os.Mkdir(filepath.Join(ws, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := mustCall(t, s, "ls", map[string]any{"path": "empty"}); text(r) != "(empty directory)" {
		t.Fatalf("empty: %q", text(r))
	}
	r, _ = call(t, s, "ls", map[string]any{"path": "a.go"})
	if !r.IsError || text(r) != "Not a directory: a.go" {
		t.Fatalf("ls a file: %q", text(r))
	}
}

func TestLsOutputCap(t *testing.T) {
	s, ws := newSet(t, WithOutputLimit(3, 1<<20))
	for i := range 5 {
		writeFile(t, ws, fmt.Sprintf("f%d", i), "")
	}
	r := mustCall(t, s, "ls", map[string]any{})
	if got := text(r); got != "f0\nf1\nf2\n\n[Showing 3 of 5 entries (1.0MB limit).]" {
		t.Fatalf("got %q", got)
	}
}
