package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// escapeFixture builds a workspace next to a secret directory with every kind
// of link out of it, and returns the set, the workspace and the outside dir.
func escapeFixture(t *testing.T) (*Set, string, string) {
	t.Helper()
	s, ws := newSet(t)
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "top secret\n")
	writeFile(t, ws, "inside.txt", "fine\n")
	links := map[string]string{
		"file-link":     filepath.Join(outside, "secret.txt"), // symlinked file, absolute
		"dir-link":      outside,                              // symlinked directory
		"rel-link":      "../" + filepath.Base(outside) + "/secret.txt",
		"dangling-link": filepath.Join(outside, "new.txt"), // does not exist yet
		"good-link":     filepath.Join(ws, "inside.txt"),   // absolute but inside
		"good-rel":      "inside.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../dir-link", filepath.Join(ws, "sub", "chain")); err != nil { // two hops
		t.Fatal(err)
	}
	return s, ws, outside
}

func TestResolveRefusesEscapes(t *testing.T) {
	s, ws, outside := escapeFixture(t)
	w := s.Workspace()
	cases := []struct {
		path   string
		reason string // part of the error
	}{
		{"..", `escapes the workspace with ".."`},
		{"../x", `escapes the workspace with ".."`},
		{"a/../../x", `escapes the workspace with ".."`},
		{"/etc/passwd", "absolute path outside the workspace"},
		{filepath.Join(outside, "secret.txt"), "absolute path outside the workspace"},
		{"~/x", "home directory"},
		{"file-link", `through symlink "file-link"`},
		{"rel-link", `through symlink "rel-link"`},
		{"dir-link/secret.txt", `through symlink "dir-link"`},
		{"dir-link/new/deeper.txt", `through symlink "dir-link"`}, // new file under a symlinked dir
		{"dangling-link", `through symlink "dangling-link"`},      // new file through a symlink
		{"sub/chain/secret.txt", `through symlink "sub/chain"`},
		{filepath.Join(ws, "dir-link", "secret.txt"), `through symlink "dir-link"`},
	}
	for _, c := range cases {
		_, err := w.Resolve(c.path)
		if !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve(%q) = %v, want ErrOutside", c.path, err)
			continue
		}
		var pe *PathError
		if !errors.As(err, &pe) || pe.Path != c.path {
			t.Errorf("Resolve(%q): error %v does not name the path", c.path, err)
		}
		if !strings.Contains(err.Error(), c.reason) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Resolve(%q) = %q, want it to say %q", c.path, err, c.reason)
		}
	}
}

func TestResolveInside(t *testing.T) {
	s, ws, _ := escapeFixture(t)
	w := s.Workspace()
	cases := map[string]string{
		".":                              ".",
		"inside.txt":                     "inside.txt",
		"./sub/../inside.txt":            "inside.txt",
		"@inside.txt":                    "inside.txt",
		filepath.Join(ws, "inside.txt"):  "inside.txt",
		ws:                               ".",
		"good-link":                      "inside.txt", // absolute symlink inside
		"good-rel":                       "inside.txt",
		"new/dir/file.txt":               "new/dir/file.txt",
		"sub/new.txt":                    "sub/new.txt",
		filepath.Join(ws, "sub", "x.go"): "sub/x.go",
	}
	for in, want := range cases {
		got, err := w.Resolve(in)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestResolveThroughSymlinkedWorkspacePath(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWorkspace(link)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("close workspace: %v", err)
		}
	}()
	got, err := w.Resolve(filepath.Join(link, "a.txt"))
	if err != nil || got != "a.txt" {
		t.Fatalf("Resolve via the workspace's symlinked path = %q, %v", got, err)
	}
}

func TestResolveLoop(t *testing.T) {
	s, ws := newSet(t)
	if err := os.Symlink("b", filepath.Join(ws, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(ws, "b")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Workspace().Resolve("a/x")
	if err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Fatalf("Resolve through a loop = %v", err)
	}
}

func TestOpenWorkspaceErrors(t *testing.T) {
	if _, err := OpenWorkspace(""); err == nil {
		t.Error("empty dir accepted")
	}
	if _, err := OpenWorkspace(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing dir accepted")
	}
}

// Every tool refuses every kind of escape with a PathError naming the path.
func TestToolsRefuseEscapes(t *testing.T) {
	s, ws, outside := escapeFixture(t)
	paths := []string{"../x", "/etc/passwd", "file-link", "dir-link/secret.txt", "dir-link/new.txt", "dangling-link", "sub/chain/secret.txt"}
	for _, p := range paths {
		calls := map[string]any{
			"read":  map[string]any{"path": p},
			"write": map[string]any{"path": p, "content": "pwned"},
			"edit":  map[string]any{"path": p, "edits": []map[string]string{{"oldText": "top", "newText": "pwned"}}},
			"grep":  map[string]any{"pattern": "secret", "path": p},
			"find":  map[string]any{"pattern": "*", "path": p},
			"ls":    map[string]any{"path": p},
		}
		for name, args := range calls {
			_, err := call(t, s, name, args)
			if !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), p) {
				t.Errorf("%s %q: err = %v, want ErrOutside naming the path", name, p, err)
			}
		}
	}
	if got := readFile(t, outside, "secret.txt"); got != "top secret\n" {
		t.Fatalf("secret changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file was created outside: %v", err)
	}
	_ = ws
}

// A symlink made by a command is refused when a tool follows it.
func TestSymlinkCreatedByBashIsRefused(t *testing.T) {
	s, _ := newSet(t)
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "top secret\n")
	mustCall(t, s, "bash", map[string]any{"command": "ln -s " + outside + "/secret.txt leak && ln -s " + outside + " leakdir"})
	for _, p := range []string{"leak", "leakdir/secret.txt"} {
		_, err := call(t, s, "read", map[string]any{"path": p})
		if !errors.Is(err, ErrOutside) {
			t.Errorf("read %s: %v, want ErrOutside", p, err)
		}
		_, err = call(t, s, "write", map[string]any{"path": p, "content": "x"})
		if !errors.Is(err, ErrOutside) {
			t.Errorf("write %s: %v, want ErrOutside", p, err)
		}
	}
	// grep and find do not follow symlinks while walking.
	r := mustCall(t, s, "grep", map[string]any{"pattern": "secret"})
	if strings.Contains(text(r), "top secret") {
		t.Errorf("grep followed a symlink out: %s", text(r))
	}
	r = mustCall(t, s, "find", map[string]any{"pattern": "**/secret.txt"})
	if strings.Contains(text(r), "secret.txt") {
		t.Errorf("find descended a symlink out: %s", text(r))
	}
	r = mustCall(t, s, "ls", map[string]any{})
	wantContains(t, text(r), "leak@", "leakdir@")
}

func TestCallWorkspace(t *testing.T) {
	s, root := newSet(t)
	tl, _ := s.Get("write")
	sub := filepath.Join(root, "sessions", "s1")
	r, err := tl.Execute(t.Context(), callIn(sub, "write", `{"path":"a.txt","content":"hi"}`), nil)
	if err != nil || r.IsError {
		t.Fatalf("write in call workspace: %v %s", err, text(r))
	}
	if got := readFile(t, sub, "a.txt"); got != "hi" {
		t.Fatalf("got %q", got)
	}
	// The call's workspace confines like the root does: its parent is out.
	_, err = tl.Execute(t.Context(), callIn(sub, "write", `{"path":"../escape.txt","content":"x"}`), nil)
	if !errors.Is(err, ErrOutside) {
		t.Fatalf("escape from call workspace: %v", err)
	}
	// A call workspace outside the root is refused.
	_, err = tl.Execute(t.Context(), callIn(t.TempDir(), "write", `{"path":"a.txt","content":"x"}`), nil)
	if !errors.Is(err, ErrOutside) {
		t.Fatalf("call workspace outside the root: %v", err)
	}
}
