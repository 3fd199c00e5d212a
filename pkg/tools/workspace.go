package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinkHops bounds symlink resolution, like the kernel's ELOOP limit.
const maxSymlinkHops = 40

// Workspace is a directory the tools are confined to. It resolves the paths a
// model gives into paths inside it and opens them through an [os.Root].
//
// A Workspace is safe for concurrent use. Close releases its directory handle.
type Workspace struct {
	dir  string // absolute, symlink-free
	root *os.Root
}

// OpenWorkspace opens dir, which must be an existing directory.
func OpenWorkspace(dir string) (*Workspace, error) {
	if dir == "" {
		return nil, errors.New("workspace: directory is required")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	return &Workspace{dir: real, root: root}, nil
}

// Dir returns the workspace's absolute, symlink-free directory.
func (w *Workspace) Dir() string { return w.dir }

// Root returns the handle every file operation goes through.
func (w *Workspace) Root() *os.Root { return w.root }

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Resolve turns p — relative to the workspace, or absolute and inside it —
// into a symlink-free path relative to the workspace ("." for the workspace
// itself) for use with [Workspace.Root]. Components that do not exist yet are
// kept as given, so the result also names files about to be created. A path
// that leaves the workspace in any way is a [*PathError].
func (w *Workspace) Resolve(p string) (string, error) {
	given := p
	p = strings.TrimPrefix(p, "@") // models sometimes quote paths as @file
	switch {
	case p == "":
		return "", w.refuse(given, "is empty")
	case strings.ContainsRune(p, 0):
		return "", w.refuse(given, "contains a NUL byte")
	case p == "~" || strings.HasPrefix(p, "~/"):
		return "", w.refuse(given, "is in the home directory, outside the workspace")
	}
	var start string
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		if !within(w.dir, clean) {
			// The caller may know the workspace by a path through a symlink
			// (e.g. /tmp on some systems); resolve before refusing.
			parent, rest := existingPrefix(clean)
			if real, err := filepath.EvalSymlinks(parent); err != nil || !within(w.dir, filepath.Join(real, rest)) {
				return "", w.refuse(given, "is an absolute path outside the workspace")
			}
		}
		start = clean
	} else {
		clean := filepath.Clean(p)
		if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return "", w.refuse(given, `escapes the workspace with ".."`)
		}
		start = filepath.Join(w.dir, clean)
	}
	real, link, err := resolve(start)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", given, err)
	}
	if !within(w.dir, real) {
		if link != "" {
			return "", w.refuse(given, fmt.Sprintf("resolves through symlink %q to %q, outside the workspace", w.display(link), real))
		}
		return "", w.refuse(given, fmt.Sprintf("resolves to %q, outside the workspace", real))
	}
	rel, err := filepath.Rel(w.dir, real)
	if err != nil {
		return "", w.refuse(given, err.Error())
	}
	return rel, nil
}

// Sub opens the directory p (resolved like any path) as a workspace of its
// own, creating it first when create is set.
func (w *Workspace) Sub(p string, create bool) (*Workspace, error) {
	rel, err := w.Resolve(p)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		root, err := w.root.OpenRoot(".")
		if err != nil {
			return nil, err
		}
		return &Workspace{dir: w.dir, root: root}, nil
	}
	if create {
		if err := w.root.MkdirAll(rel, 0o755); err != nil {
			return nil, fmt.Errorf("workspace %q: %w", p, err)
		}
	}
	root, err := w.root.OpenRoot(rel)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", p, err)
	}
	return &Workspace{dir: filepath.Join(w.dir, rel), root: root}, nil
}

// display returns abs relative to the workspace when it is inside.
func (w *Workspace) display(abs string) string {
	if rel, err := filepath.Rel(w.dir, abs); err == nil && within(w.dir, abs) {
		return rel
	}
	return abs
}

func (w *Workspace) refuse(p, reason string) error {
	return &PathError{Path: p, Workspace: w.dir, Reason: reason}
}

// within reports whether p is dir or below it; both are clean and absolute.
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// existingPrefix splits a clean absolute path into its longest existing
// prefix and the rest.
func existingPrefix(p string) (string, string) {
	rest := ""
	for {
		if _, err := os.Lstat(p); err == nil || p == string(filepath.Separator) {
			return p, rest
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = filepath.Dir(p)
	}
}

// resolve walks the clean absolute path p component by component as the
// kernel would, following symlinks, and returns the symlink-free result.
// Components that do not exist are appended as they are. link is the first
// symlink met (absolute), for error messages.
func resolve(p string) (real, link string, err error) {
	sep := string(filepath.Separator)
	todo := strings.Split(strings.TrimPrefix(p, sep), sep)
	cur := sep
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing below exists: the rest is lexical.
			return filepath.Join(append([]string{next}, todo...)...), link, nil
		}
		if err != nil {
			return "", link, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "", link, fmt.Errorf("too many levels of symbolic links at %q", next)
		}
		if link == "" {
			link = next
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", link, err
		}
		if filepath.IsAbs(target) {
			cur = sep
		}
		todo = append(strings.Split(target, sep), todo...)
	}
	return cur, link, nil
}
