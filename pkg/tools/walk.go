package tools

import (
	"context"
	"io/fs"
	"path"
	"path/filepath"
)

// searchPath is a directory or file a walking tool starts from.
type searchPath struct {
	fsys    fs.FS  // the workspace as an fs.FS
	rel     string // slash-separated, symlink-free, relative to the workspace
	display string // how results are named: the caller's path, cleaned
	isDir   bool
}

// resolveSearch resolves p (default ".") for grep, find or ls.
func resolveSearch(ws *Workspace, p string) (searchPath, error) {
	if p == "" {
		p = "."
	}
	rel, err := ws.Resolve(p)
	if err != nil {
		return searchPath{}, err
	}
	fsys := ws.root.FS()
	rel = filepath.ToSlash(rel)
	fi, err := fs.Stat(fsys, rel)
	if err != nil {
		return searchPath{}, err
	}
	return searchPath{fsys: fsys, rel: rel, display: filepath.ToSlash(filepath.Clean(p)), isDir: fi.IsDir()}, nil
}

// sub returns the walked path p (relative to the workspace) relative to the
// search directory.
func (s searchPath) sub(p string) string {
	if s.rel == "." {
		return p
	}
	return p[len(s.rel)+1:]
}

// name returns how the walked path p (relative to the workspace) is shown:
// under the path the caller gave.
func (s searchPath) name(p string) string {
	if !s.isDir {
		return s.display
	}
	if s.display == "." {
		return s.sub(p)
	}
	return path.Join(s.display, s.sub(p))
}

// walk calls visit for every file and directory below s in lexical order,
// skipping .git directories and not following symlinks (they are visited as
// entries, not descended into). It stops at ctx's cancellation, returning
// ctx's error, or when visit returns fs.SkipAll.
func (s searchPath) walk(ctx context.Context, visit func(p string, d fs.DirEntry) error) error {
	return fs.WalkDir(s.fsys, s.rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == s.rel {
				return err
			}
			return nil // unreadable entries are skipped, as rg and fd do
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == s.rel && s.isDir {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		return visit(p, d)
	})
}
