package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

const writeSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "Path to the file to write, relative to the workspace (or absolute inside it)"},
    "content": {"type": "string", "description": "Content to write to the file"}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

// writeTool creates or overwrites a file, creating its parent directories.
type writeTool struct{ env *env }

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// WriteDetails is the Details of a write result.
type WriteDetails struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created"` // the file did not exist before
}

// Spec describes write. Writing the same content twice leaves the same file,
// so write is idempotent.
func (t *writeTool) Spec() events.ToolSpec {
	return spec("write", "Write content to a file. Creates the file if it does not exist, overwrites it if it does, and creates parent directories as needed.",
		writeSchema, true)
}

// Execute writes the file.
func (t *writeTool) Execute(ctx context.Context, call tool.Call, _ func(tool.Result)) (tool.Result, error) {
	var a writeArgs
	if err := decodeArgs("write", call.Arguments, &a, []string{"path", "content"}, []string{"path", "content"}); err != nil {
		return tool.Result{}, err
	}
	ws, rel, release, err := t.env.resolveFile(call, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	defer release()
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	fi, err := ws.root.Stat(rel)
	created := errors.Is(err, fs.ErrNotExist)
	switch {
	case err == nil && fi.IsDir():
		return errorResult(fmt.Sprintf("%s is a directory; give a file path", a.Path), nil), nil
	case err == nil && !fi.Mode().IsRegular():
		return errorResult(fmt.Sprintf("%s is not a regular file (%s)", a.Path, fi.Mode().Type()), nil), nil
	case err == nil:
		if err := ws.refuseLinked(a.Path, fi); err != nil {
			return tool.Result{}, err
		}
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := ws.root.MkdirAll(dir, 0o755); err != nil {
			return tool.Result{}, fmt.Errorf("write %s: creating parent directories: %w", a.Path, err)
		}
	}
	f, err := ws.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return tool.Result{}, fmt.Errorf("write %s: %w", a.Path, err)
	}
	if _, err := f.WriteString(a.Content); err != nil {
		return tool.Result{}, fmt.Errorf("write %s: %w", a.Path, errors.Join(err, f.Close()))
	}
	if err := f.Close(); err != nil {
		return tool.Result{}, fmt.Errorf("write %s: %w", a.Path, err)
	}
	return textResult(fmt.Sprintf("Successfully wrote %d bytes to %s", len(a.Content), a.Path),
		WriteDetails{Path: a.Path, Bytes: len(a.Content), Created: created}), nil
}
