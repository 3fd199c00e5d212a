package tools

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/cairn-agents/cairn/pkg/tool"
)

// resolveFile resolves p in the call's workspace for read, edit or write:
// rel is its symlink-free path relative to ws. Unless err is set, release
// must be called once the tool is done with ws.
func (e *env) resolveFile(call tool.Call, p string) (ws *Workspace, rel string, release func(), err error) {
	ws, release, err = e.workspace(call)
	if err != nil {
		return nil, "", nil, err
	}
	if rel, err = ws.Resolve(p); err != nil {
		release()
		return nil, "", nil, err
	}
	return ws, rel, release, nil
}

// statFile stats the file a tool named name was given as p (rel in ws). A
// file that does not exist is an answer for the model, res; any other failure
// is err, naming the tool and p.
func statFile(ws *Workspace, name, p, rel string) (fi fs.FileInfo, res *tool.Result, err error) {
	fi, err = ws.root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r := errorResult(fmt.Sprintf("File not found: %s", p), nil)
		return nil, &r, nil
	case err != nil:
		return nil, nil, fmt.Errorf("%s %s: %w", name, p, err)
	}
	return fi, nil, nil
}
