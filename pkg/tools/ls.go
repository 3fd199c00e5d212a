package tools

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// DefaultLsLimit is how many entries ls returns unless told otherwise.
const DefaultLsLimit = 500

const lsSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list (default: the workspace)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of entries to return (default 500)"}
  },
  "additionalProperties": false
}`

// lsTool lists a directory.
type lsTool struct{ env *env }

type lsArgs struct {
	Path  string `json:"path"`
	Limit *int   `json:"limit"`
}

// LsDetails is the Details of an ls result.
type LsDetails struct {
	Entries      int         `json:"entries"` // in the directory
	LimitReached bool        `json:"limitReached,omitempty"`
	Truncation   *Truncation `json:"truncation,omitempty"`
}

// Spec describes ls.
func (t *lsTool) Spec() events.ToolSpec {
	return spec("ls", fmt.Sprintf("List a directory's entries, sorted alphabetically, directories ending in '/' and symlinks that cannot be followed in '@'. "+
		"Includes dotfiles. Output is limited to %d entries by default and %d lines or %s.",
		DefaultLsLimit, t.env.out.lines, formatSize(int64(t.env.out.bytes))), lsSchema, true)
}

// Execute lists.
func (t *lsTool) Execute(ctx context.Context, call tool.Call, _ func(tool.Result)) (tool.Result, error) {
	var a lsArgs
	if err := decodeArgs("ls", call.Arguments, &a, []string{"path", "limit"}, nil); err != nil {
		return tool.Result{}, err
	}
	limit, err := optLimit(a.Limit, DefaultLsLimit)
	if err != nil {
		return tool.Result{}, err
	}
	sp, release, res, err := t.env.openSearch(call, a.Path, true)
	if res != nil || err != nil {
		return deref(res), err
	}
	defer release()
	entries, err := fs.ReadDir(sp.fsys, sp.rel)
	if err != nil {
		return tool.Result{}, fmt.Errorf("ls %s: %w", a.Path, err)
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	slices.SortFunc(entries, func(x, y fs.DirEntry) int {
		if c := strings.Compare(strings.ToLower(x.Name()), strings.ToLower(y.Name())); c != 0 {
			return c
		}
		return strings.Compare(x.Name(), y.Name())
	})
	d := LsDetails{Entries: len(entries), LimitReached: len(entries) > limit}
	if len(entries) == 0 {
		return textResult("(empty directory)", d), nil
	}
	lines := make([]string, 0, min(limit, len(entries)))
	for _, e := range entries[:min(limit, len(entries))] {
		lines = append(lines, e.Name()+suffix(sp.fsys, path.Join(sp.rel, e.Name()), e))
	}
	text, tr := t.env.out.head(lines)
	var note string
	switch {
	case tr.Truncated:
		d.Truncation = &tr
		note = fmt.Sprintf("Showing %d of %d entries (%s limit)", tr.OutputLines, len(entries), formatSize(int64(t.env.out.bytes)))
	case d.LimitReached:
		note = fmt.Sprintf("%d entries limit reached (%d in the directory). Use limit=%d for more", limit, len(entries), min(limit*2, len(entries)))
	}
	if note != "" {
		text += "\n\n[" + note + ".]"
	}
	return textResult(text, d), nil
}

// suffix marks directories with "/" and symlinks that cannot be followed
// inside the workspace (dangling or pointing out) with "@". A symlink to a
// directory inside the workspace is shown as a directory.
func suffix(fsys fs.FS, p string, e fs.DirEntry) string {
	if e.IsDir() {
		return "/"
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return ""
	}
	fi, err := fs.Stat(fsys, p)
	switch {
	case err != nil:
		return "@"
	case fi.IsDir():
		return "/"
	}
	return ""
}
