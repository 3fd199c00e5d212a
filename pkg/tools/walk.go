package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/cairn-agents/cairn/pkg/tool"
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

// openSearch resolves p in the call's workspace for grep, find or ls. A path
// that does not exist, or with wantDir one that is not a directory, is an
// answer for the model: it comes back as res, with nothing to release.
// Otherwise release must be called once the search is done.
func (e *env) openSearch(call tool.Call, p string, wantDir bool) (sp searchPath, release func(), res *tool.Result, err error) {
	ws, release, err := e.workspace(call)
	if err != nil {
		return searchPath{}, nil, nil, err
	}
	sp, err = resolveSearch(ws, p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r := errorResult(fmt.Sprintf("Path not found: %s", p), nil)
		res = &r
	case err == nil && wantDir && !sp.isDir:
		r := errorResult(fmt.Sprintf("Not a directory: %s", p), nil)
		res = &r
	}
	if res != nil {
		release()
		return searchPath{}, nil, res, nil
	}
	if err != nil {
		release()
		return searchPath{}, nil, nil, err
	}
	return sp, release, nil, nil
}

// optLimit reads an optional limit argument: def when absent, at least 1.
func optLimit(limit *int, def int) (int, error) {
	if limit == nil {
		return def, nil
	}
	if *limit < 1 {
		return 0, argErr("limit", "must be at least 1, got %d", *limit)
	}
	return *limit, nil
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

// deref returns *r, or the zero Result for nil.
func deref(r *tool.Result) tool.Result {
	if r == nil {
		return tool.Result{}
	}
	return *r
}
