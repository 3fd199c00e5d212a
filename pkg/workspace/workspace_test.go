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

// TestRel is an attacker's notes: every way out of the tenant root
// (root/<tenant>), into another tenant's workspaces above all, and the
// ways in that must keep working.
func TestRel(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "default") // the tenant root of events.DefaultRef
	outside := t.TempDir()
	beta := filepath.Join(top, "beta", "s1") // another tenant's session of the same id
	for _, d := range []string{filepath.Join(root, "proj", "sub"), beta} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(beta, filepath.Join(root, "tobeta")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "proj"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, root, ws, want, refused string
	}{
		{"default is the session id", top, "", "s1", ""},
		{"relative", top, "proj/sub", "proj/sub", ""},
		{"relative, cleaned", top, "./proj//sub/", "proj/sub", ""},
		{"relative, not there yet", top, "new/dir", "new/dir", ""},
		{"absolute inside", top, filepath.Join(root, "proj"), "proj", ""},
		{"absolute, the tenant root itself", top, root, ".", ""},
		{"absolute inside, not there yet", top, filepath.Join(root, "later"), "later", ""},
		{"symlink that stays inside", top, "alias/sub", "alias/sub", ""},
		{"dot dot", top, "../x", "", "outside the tenant's workspace root: a relative"},
		{"dot dot in the middle", top, "proj/../../x", "", "outside the tenant's workspace root: a relative"},
		{"dot dot into another tenant", top, "../beta/s1", "", "outside the tenant's workspace root: a relative"},
		{"absolute, another tenant's session", top, beta, "", "outside the tenant's workspace root"},
		{"absolute, the whole root", top, top, "", "outside the tenant's workspace root"},
		{"symlink into another tenant", top, "tobeta", "", "symlink"},
		{"absolute outside", top, outside, "", "outside the tenant's workspace root"},
		{"absolute with dot dot out", top, filepath.Join(root, "..", "x"), "", "outside the tenant's workspace root"},
		{"absolute prefix look-alike", top, root + "-evil", "", "outside the tenant's workspace root"},
		{"symlink out", top, "out", "", "symlink"},
		{"below a symlink out", top, "out/deeper/dir", "", "symlink"},
		{"absolute through a symlink out", top, filepath.Join(root, "out", "x"), "", "symlink"},
		{"NUL byte", top, "a\x00b", "", "NUL"},
		{"absolute, root unknown", "", "/abs/path", "", "root is not known"},
		{"relative, root unknown", "", "proj", "proj", ""},
		{"dot dot, root unknown", "", "../proj", "", "outside the tenant's workspace root: a relative"},
		{"root elsewhere (another host): lexical only", "/no/such/root", "/no/such/root/default/p", "p", ""},
		{"root elsewhere, another tenant", "/no/such/root", "/no/such/root/beta/p", "", "outside the tenant's workspace root"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := workspace.Rel(c.root, events.DefaultRef("s1"), c.ws)
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

// Two tenants' sessions of one id get two directories; an invalid tenant
// never reaches a path.
func TestTenantsGetTheirOwnDirectories(t *testing.T) {
	root := t.TempDir()
	a, b := events.SessionRef{Tenant: "acme", ID: "s1"}, events.SessionRef{Tenant: "beta", ID: "s1"}
	ra, err := workspace.Rel(root, a, "")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := workspace.Rel(root, b, "")
	if err != nil {
		t.Fatal(err)
	}
	if da, db := workspace.Dir(root, a, ra), workspace.Dir(root, b, rb); da == db ||
		da != filepath.Join(root, "acme", "s1") || db != filepath.Join(root, "beta", "s1") {
		t.Fatalf("workspaces %s and %s, want root/acme/s1 and root/beta/s1", da, db)
	}
	for _, bad := range []string{"..", "a/b", "", "Acme"} {
		if _, err := workspace.Rel(root, events.SessionRef{Tenant: bad, ID: "s1"}, ""); !errors.Is(err, events.ErrInvalid) {
			t.Errorf("tenant %q: %v, want ErrInvalid", bad, err)
		}
	}
}
