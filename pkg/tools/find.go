package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// DefaultFindLimit is how many paths find returns unless told otherwise.
const DefaultFindLimit = 1000

const findSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Glob to match, e.g. '*.go', '**/*.json' or 'src/**/*.{ts,tsx}'; without '/' it matches file names"},
    "path": {"type": "string", "description": "Directory to search (default: the workspace)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of results (default 1000)"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// findTool lists files and directories whose path matches a glob.
type findTool struct{ env *env }

type findArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Limit   *int   `json:"limit"`
}

// FindDetails is the Details of a find result.
type FindDetails struct {
	Results      int         `json:"results"`
	LimitReached bool        `json:"limitReached,omitempty"`
	Truncation   *Truncation `json:"truncation,omitempty"`
}

// Spec describes find.
func (t *findTool) Spec() events.ToolSpec {
	return spec("find", fmt.Sprintf("Find files and directories by glob pattern. Returns paths sorted, directories ending in '/'. "+
		"Skips .git; does not follow symlinks or read .gitignore. Output is limited to %d results by default and %d lines or %s.",
		DefaultFindLimit, t.env.out.lines, formatSize(int64(t.env.out.bytes))), findSchema, true)
}

// Execute searches.
func (t *findTool) Execute(ctx context.Context, call tool.Call, _ func(tool.Result)) (tool.Result, error) {
	var a findArgs
	if err := decodeArgs("find", call.Arguments, &a, []string{"pattern", "path", "limit"}, []string{"pattern"}); err != nil {
		return tool.Result{}, err
	}
	if a.Pattern == "" {
		return tool.Result{}, argErr("pattern", "must not be empty")
	}
	if !validGlob(a.Pattern) {
		return tool.Result{}, argErr("pattern", "malformed glob %q", a.Pattern)
	}
	limit, err := optLimit(a.Limit, DefaultFindLimit)
	if err != nil {
		return tool.Result{}, err
	}
	sp, release, res, err := t.env.openSearch(call, a.Path, true)
	if res != nil || err != nil {
		return deref(res), err
	}
	defer release()
	var found []string
	err = sp.walk(ctx, func(p string, d fs.DirEntry) error {
		if !globMatch(a.Pattern, sp.sub(p)) {
			return nil
		}
		name := sp.name(p)
		if d.IsDir() {
			name += "/"
		}
		found = append(found, name)
		if len(found) >= limit {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return tool.Result{}, err
	}
	d := FindDetails{Results: len(found), LimitReached: len(found) >= limit}
	if len(found) == 0 {
		return textResult("No files found matching pattern", d), nil
	}
	slices.Sort(found)
	text, tr := t.env.out.head(found)
	var note string
	switch {
	case tr.Truncated:
		d.Truncation = &tr
		note = fmt.Sprintf("Showing %d of %d results (%s limit); refine the pattern or path", tr.OutputLines, tr.TotalLines, formatSize(int64(t.env.out.bytes)))
		if d.LimitReached {
			note += fmt.Sprintf("; the search stopped at limit=%d", limit)
		}
	case d.LimitReached:
		note = fmt.Sprintf("%d results limit reached. Use limit=%d for more, or refine the pattern", limit, limit*2)
	}
	if note != "" {
		text += "\n\n[" + note + ".]"
	}
	return textResult(text, d), nil
}
