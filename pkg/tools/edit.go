package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// MaxEditBytes is the largest file edit works on.
const MaxEditBytes = 10 * 1024 * 1024

const editSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "Path to the file to edit, relative to the workspace (or absolute inside it)"},
    "edits": {
      "type": "array",
      "minItems": 1,
      "description": "Replacements, each matched against the original file; all are applied or none",
      "items": {
        "type": "object",
        "properties": {
          "oldText": {"type": "string", "minLength": 1, "description": "Exact text to find; must occur exactly once in the file"},
          "newText": {"type": "string", "description": "Text to put in its place"}
        },
        "required": ["oldText", "newText"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`

// editTool replaces exact text in a file, several replacements per call.
type editTool struct{ env *env }

type editArgs struct {
	Path  string            `json:"path"`
	Edits []json.RawMessage `json:"edits"`
}

type replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// EditDetails is the Details of an edit result.
type EditDetails struct {
	Path             string `json:"path"`
	Replacements     int    `json:"replacements"`
	FirstChangedLine int    `json:"firstChangedLine,omitempty"`
	// Diff shows each replaced region as whole lines, "-" before and "+"
	// after, under an "@@ line N @@" header (N in the original file).
	Diff string `json:"diff,omitempty"`
}

// Spec describes edit. Applying the same edit twice fails the second time
// (its oldText is gone), so edit is not idempotent.
func (t *editTool) Spec() events.ToolSpec {
	return spec("edit", "Edit a file by replacing exact text. Each edit's oldText must match exactly once in the original file, whitespace included; "+
		"several non-overlapping edits may be given in one call and are applied together or not at all.",
		editSchema, false)
}

// Execute applies the edits.
func (t *editTool) Execute(ctx context.Context, call tool.Call, _ func(tool.Result)) (tool.Result, error) {
	var a editArgs
	if err := decodeArgs("edit", call.Arguments, &a, []string{"path", "edits"}, []string{"path", "edits"}); err != nil {
		return tool.Result{}, err
	}
	if len(a.Edits) == 0 {
		return tool.Result{}, argErr("edits", "must hold at least one edit")
	}
	reps := make([]replacement, len(a.Edits))
	for i, raw := range a.Edits {
		if err := decodeArgs("edit", raw, &reps[i], []string{"oldText", "newText"}, []string{"oldText", "newText"}); err != nil {
			return tool.Result{}, underField("edits["+strconv.Itoa(i)+"]", err)
		}
		if reps[i].OldText == "" {
			return tool.Result{}, argErr("edits["+strconv.Itoa(i)+"].oldText", "must not be empty")
		}
	}
	ws, rel, release, err := t.env.resolveFile(call, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	defer release()
	fi, res, err := statFile(ws, "edit", a.Path, rel)
	if res != nil || err != nil {
		return deref(res), err
	}
	switch {
	case !fi.Mode().IsRegular():
		return errorResult(fmt.Sprintf("%s is not a regular file", a.Path), nil), nil
	case linked(fi):
		return tool.Result{}, ws.refuseLinked(a.Path, fi)
	case fi.Size() > MaxEditBytes:
		return errorResult(fmt.Sprintf("%s is %s, over the %s edit limit; use bash (sed) for large files", a.Path, formatSize(fi.Size()), formatSize(MaxEditBytes)), nil), nil
	}
	raw, err := ws.root.ReadFile(rel)
	if err != nil {
		return tool.Result{}, fmt.Errorf("edit %s: %w", a.Path, err)
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return errorResult(fmt.Sprintf("%s is a binary file; edit works on text", a.Path), nil), nil
	}
	out, first, diff, problem := applyEdits(string(raw), reps)
	if problem != "" {
		return errorResult(fmt.Sprintf("Edit failed, %s was not changed:\n%s", a.Path, problem), nil), nil
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	f, err := ws.root.OpenFile(rel, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return tool.Result{}, fmt.Errorf("edit %s: %w", a.Path, err)
	}
	if _, err := f.WriteString(out); err != nil {
		return tool.Result{}, fmt.Errorf("edit %s: %w", a.Path, errors.Join(err, f.Close()))
	}
	if err := f.Close(); err != nil {
		return tool.Result{}, fmt.Errorf("edit %s: %w", a.Path, err)
	}
	return textResult(fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(reps), a.Path),
		EditDetails{Path: a.Path, Replacements: len(reps), FirstChangedLine: first, Diff: diff}), nil
}

// applyEdits applies reps to content, every oldText matched against the
// original. Line endings are matched loosely: a file with only CRLF endings
// is edited as if it had LF endings and written back with CRLF; a UTF-8 byte
// order mark is kept.
// It returns the new content, the first changed line (1-based) and a diff,
// or a description of every edit that failed.
func applyEdits(content string, reps []replacement) (out string, first int, diff string, problem string) {
	bom := strings.HasPrefix(content, "\uFEFF")
	content = strings.TrimPrefix(content, "\uFEFF")
	// Only a file whose every line ends in CRLF is edited as LF; a file with
	// mixed endings is matched exactly, so its LF lines stay LF.
	crlf := strings.Contains(content, "\r\n") && strings.Count(content, "\r\n") == strings.Count(content, "\n")
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	type span struct{ i, start, end int }
	var spans []span
	var problems []string
	n := len(reps)
	changes := false
	for i, r := range reps {
		old, repl := r.OldText, r.NewText
		if crlf {
			old, repl = strings.ReplaceAll(old, "\r\n", "\n"), strings.ReplaceAll(repl, "\r\n", "\n")
			reps[i] = replacement{old, repl}
		}
		changes = changes || old != repl
		switch c := strings.Count(content, old); c {
		case 0:
			problems = append(problems, fmt.Sprintf("- edit %d of %d: oldText not found; it must match the file exactly, whitespace and indentation included (read the file again to check)", i+1, n))
		case 1:
			at := strings.Index(content, old)
			spans = append(spans, span{i, at, at + len(old)})
		default:
			problems = append(problems, fmt.Sprintf("- edit %d of %d: oldText matches %d times (at lines %s); include more surrounding text to make it unique", i+1, n, c, matchLines(content, old)))
		}
	}
	if len(problems) == 0 && !changes {
		problems = append(problems, "- no edit changes anything: every newText equals its oldText")
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	for k := 1; k < len(spans); k++ {
		if spans[k].start < spans[k-1].end {
			problems = append(problems, fmt.Sprintf("- edits %d and %d overlap; merge them into one edit", spans[k-1].i+1, spans[k].i+1))
		}
	}
	if len(problems) > 0 {
		return "", 0, "", strings.Join(problems, "\n")
	}
	var b, d strings.Builder
	prev := 0
	for _, s := range spans {
		b.WriteString(content[prev:s.start])
		b.WriteString(reps[s.i].NewText)
		prev = s.end
		writeHunk(&d, content, s.start, s.end, reps[s.i].NewText)
	}
	b.WriteString(content[prev:])
	out = b.String()
	first = strings.Count(content[:spans[0].start], "\n") + 1
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	if bom {
		out = "\uFEFF" + out
	}
	return out, first, d.String(), ""
}

// writeHunk writes the whole lines around content[start:end] before and
// after it is replaced by repl.
func writeHunk(d *strings.Builder, content string, start, end int, repl string) {
	ls := strings.LastIndexByte(content[:start], '\n') + 1
	le := end // a match that ends a line pulls in nothing after it
	if end == start || content[end-1] != '\n' {
		le = len(content)
		if i := strings.IndexByte(content[end:], '\n'); i >= 0 {
			le = end + i
		}
	}
	before := strings.TrimSuffix(content[ls:le], "\n")
	after := strings.TrimSuffix(content[ls:start]+repl+content[end:le], "\n")
	fmt.Fprintf(d, "@@ line %d @@\n", strings.Count(content[:start], "\n")+1)
	for l := range strings.SplitSeq(before, "\n") {
		d.WriteString("-" + l + "\n")
	}
	if after == "" && repl == "" {
		return // lines deleted
	}
	for l := range strings.SplitSeq(after, "\n") {
		d.WriteString("+" + l + "\n")
	}
}

// matchLines lists the lines where old starts in content, at most five.
func matchLines(content, old string) string {
	var lines []string
	from := 0
	for len(lines) < 5 {
		i := strings.Index(content[from:], old)
		if i < 0 {
			break
		}
		at := from + i
		lines = append(lines, strconv.Itoa(strings.Count(content[:at], "\n")+1))
		from = at + 1
	}
	s := strings.Join(lines, ", ")
	if strings.Count(content, old) > len(lines) {
		s += ", ..."
	}
	return s
}

// underField places a FieldError's field under prefix.
func underField(prefix string, err error) error {
	var fe *events.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	f := prefix
	if fe.Field != "" {
		f += "." + fe.Field
	}
	return &events.FieldError{Field: f, Problem: fe.Problem}
}
