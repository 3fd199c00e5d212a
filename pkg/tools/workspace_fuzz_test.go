package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks the confinement property: whatever the path, Resolve
// either refuses it or returns a path whose every existing component, from
// the workspace down, is a real directory or file inside the workspace (no
// symlink left to follow).
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{".", "..", "a/../..", "/etc", "in", "in/../out", "out/x", "link/x", "loop/x", "@in", "in/./f", "//in", "in/sub/../../out/y", "~", "a\x00b"} {
		f.Add(seed)
	}
	ws := f.TempDir()
	outside := f.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "in", "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	for name, target := range map[string]string{"out": outside, "link": "in/sub", "loop": "loop", "in/sub/up": "../.."} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			f.Fatal(err)
		}
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		if err := w.Close(); err != nil {
			f.Errorf("close workspace: %v", err)
		}
	})
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := w.Resolve(p)
		if err != nil {
			return
		}
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("Resolve(%q) = %q, not inside", p, rel)
		}
		cur := w.Dir()
		for c := range strings.SplitSeq(rel, "/") {
			if c == "." {
				continue
			}
			cur = filepath.Join(cur, c)
			fi, err := os.Lstat(cur)
			if err != nil {
				return // the rest does not exist yet
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				t.Fatalf("Resolve(%q) = %q, which still goes through symlink %s", p, rel, cur)
			}
		}
		if !within(w.Dir(), cur) {
			t.Fatalf("Resolve(%q) = %q, outside", p, rel)
		}
	})
}
