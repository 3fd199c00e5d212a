package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/workspace"
)

// TestRel is an attacker's notes: every way out of the root, and the ways
// in that must keep working.
func TestRel(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proj", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "proj"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, root, ws, want, refused string
	}{
		{"default is the session id", root, "", "s1", ""},
		{"relative", root, "proj/sub", "proj/sub", ""},
		{"relative, cleaned", root, "./proj//sub/", "proj/sub", ""},
		{"relative, not there yet", root, "new/dir", "new/dir", ""},
		{"absolute inside", root, filepath.Join(root, "proj"), "proj", ""},
		{"absolute, the root itself", root, root, ".", ""},
		{"absolute inside, not there yet", root, filepath.Join(root, "later"), "later", ""},
		{"symlink that stays inside", root, "alias/sub", "alias/sub", ""},
		{"dot dot", root, "../x", "", "outside the workspace root: a relative"},
		{"dot dot in the middle", root, "proj/../../x", "", "outside the workspace root: a relative"},
		{"absolute outside", root, outside, "", "outside the workspace root"},
		{"absolute with dot dot out", root, filepath.Join(root, "..", "x"), "", "outside the workspace root"},
		{"absolute prefix look-alike", root, root + "-evil", "", "outside the workspace root"},
		{"symlink out", root, "out", "", "symlink"},
		{"below a symlink out", root, "out/deeper/dir", "", "symlink"},
		{"absolute through a symlink out", root, filepath.Join(root, "out", "x"), "", "symlink"},
		{"NUL byte", root, "a\x00b", "", "NUL"},
		{"absolute, root unknown", "", "/abs/path", "", "root is not known"},
		{"relative, root unknown", "", "proj", "proj", ""},
		{"dot dot, root unknown", "", "../proj", "", "outside the workspace root: a relative"},
		{"root elsewhere (another host): lexical only", "/no/such/root", "/no/such/root/p", "p", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := workspace.Rel(c.root, "s1", c.ws)
			if c.refused == "" {
				if err != nil || got != c.want {
					t.Fatalf("Rel(%q) = %q, %v; want %q", c.ws, got, err, c.want)
				}
				return
			}
			var fe *events.FieldError
			if err == nil || !errors.As(err, &fe) || fe.Field != "workspace" || !strings.Contains(err.Error(), c.refused) {
				t.Fatalf("Rel(%q) = %q, %v; want a workspace error saying %q", c.ws, got, err, c.refused)
			}
		})
	}
}
