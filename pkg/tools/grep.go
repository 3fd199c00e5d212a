package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// Grep defaults and bounds.
const (
	DefaultGrepLimit = 100
	// GrepMaxLineChars is how much of a matching line is shown.
	GrepMaxLineChars = 500
	// grepMaxLineBytes is how much of one line is searched.
	grepMaxLineBytes = 1 << 20
)

const grepSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Regular expression (RE2 syntax) or, with literal, plain text to search for"},
    "path": {"type": "string", "description": "Directory or file to search (default: the workspace)"},
    "glob": {"type": "string", "description": "Only search files whose name matches this glob, e.g. '*.go' or 'src/**/*.ts'"},
    "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default false)"},
    "literal": {"type": "boolean", "description": "Treat pattern as plain text, not a regular expression (default false)"},
    "context": {"type": "integer", "minimum": 0, "maximum": 100, "description": "Lines of context to show before and after each match (default 0)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of matches to return (default 100)"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// grepTool searches file contents for a pattern.
type grepTool struct{ env *env }

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignoreCase"`
	Literal    bool   `json:"literal"`
	Context    int    `json:"context"`
	Limit      *int   `json:"limit"`
}

// GrepDetails is the Details of a grep result.
type GrepDetails struct {
	Matches       int         `json:"matches"`
	Files         int         `json:"files"` // files with a match
	LimitReached  bool        `json:"limitReached,omitempty"`
	LinesShortned bool        `json:"linesTruncated,omitempty"`
	Truncation    *Truncation `json:"truncation,omitempty"`
}

// Spec describes grep.
func (t *grepTool) Spec() events.ToolSpec {
	return spec("grep", fmt.Sprintf("Search file contents for a regular expression (RE2 syntax) or literal text. Returns matching lines as path:line: text "+
		"(context lines as path-line- text). Skips .git and binary files; does not read .gitignore. Output is limited to %d matches by default and %d lines or %s; long lines are cut to %d characters.",
		DefaultGrepLimit, t.env.out.lines, formatSize(int64(t.env.out.bytes)), GrepMaxLineChars), grepSchema, true)
}

// Execute searches.
func (t *grepTool) Execute(ctx context.Context, call tool.Call, _ func(tool.Result)) (tool.Result, error) {
	var a grepArgs
	if err := decodeArgs("grep", call.Arguments, &a, []string{"pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"}, []string{"pattern"}); err != nil {
		return tool.Result{}, err
	}
	if a.Pattern == "" {
		return tool.Result{}, argErr("pattern", "must not be empty")
	}
	if a.Context < 0 || a.Context > 100 {
		return tool.Result{}, argErr("context", "must be between 0 and 100, got %d", a.Context)
	}
	limit, err := optLimit(a.Limit, DefaultGrepLimit)
	if err != nil {
		return tool.Result{}, err
	}
	if a.Glob != "" && !validGlob(a.Glob) {
		return tool.Result{}, argErr("glob", "malformed glob %q", a.Glob)
	}
	expr := a.Pattern
	if a.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return tool.Result{}, argErr("pattern", "invalid regular expression: %v", err)
	}
	sp, release, res, err := t.env.openSearch(call, a.Path, false)
	if res != nil || err != nil {
		return deref(res), err
	}
	defer release()

	g := grepper{re: re, context: a.Context, limit: limit}
	if !strings.Contains(expr, `\A`) && !strings.Contains(expr, `\z`) {
		// Lines are searched one at a time; in (?m) mode ^ and $ match at
		// line ends, so a file with no match as a whole has no matching line.
		g.pre, _ = regexp.Compile("(?m)" + expr)
	}
	g.fold = foldLiteral(expr)
	err = sp.walk(ctx, func(p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil
		}
		if a.Glob != "" && sp.isDir && !globMatch(a.Glob, sp.sub(p)) {
			return nil
		}
		if fi, err := d.Info(); err != nil || linked(fi) {
			return nil // hard-linked files may be outside the workspace: skipped
		}
		name := sp.name(p)
		f, err := sp.fsys.Open(p)
		if err != nil {
			return nil // unreadable files are skipped
		}
		defer func() { _ = f.Close() }() // opened read-only
		return g.file(name, f)
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return tool.Result{}, err
	}
	d := GrepDetails{Matches: g.matches, Files: g.files, LimitReached: g.matches >= limit, LinesShortned: g.shortened}
	if g.matches == 0 {
		return textResult("No matches found", d), nil
	}
	text, tr := t.env.out.head(g.lines)
	var notes []string
	if d.LimitReached {
		notes = append(notes, fmt.Sprintf("%d matches limit reached. Use limit=%d for more, or refine the pattern", limit, limit*2))
	}
	if tr.Truncated {
		d.Truncation = &tr
		notes = append(notes, fmt.Sprintf("Output cut to %d of %d lines (%s limit); refine the pattern or path", tr.OutputLines, tr.TotalLines, formatSize(int64(t.env.out.bytes))))
	}
	if g.shortened {
		notes = append(notes, fmt.Sprintf("Some lines cut to %d characters; use read to see them whole", GrepMaxLineChars))
	}
	if len(notes) > 0 {
		text += "\n\n[" + strings.Join(notes, ". ") + ".]"
	}
	return textResult(text, d), nil
}

// grepWholeFile is the largest file grep reads at once to rule it out with
// one regexp scan; larger files are only searched line by line.
const grepWholeFile = 8 << 20

// grepper searches files one at a time and collects output lines.
type grepper struct {
	re        *regexp.Regexp
	pre       *regexp.Regexp // whole-file prefilter, nil when unsafe
	fold      string         // lowercase literal of a case-insensitive literal search
	buf       []byte         // reused file buffer
	lower     []byte         // reused, for fold
	sc        *lineScanner   // reused
	context   int
	limit     int
	matches   int
	files     int
	shortened bool
	lines     []string
}

// file searches one file; it returns fs.SkipAll once the limit is reached.
func (g *grepper) file(name string, r io.Reader) error {
	data, whole := g.load(r)
	if bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0 {
		return nil // binary
	}
	src := io.Reader(bytes.NewReader(data))
	switch {
	case !whole:
		src = io.MultiReader(src, r)
	case g.fold != "" && !g.mayContainFold(data, g.fold):
		return nil
	case g.fold == "" && g.pre != nil && !g.pre.Match(data):
		return nil
	}
	if g.sc == nil {
		g.sc = newLineScanner(src, grepMaxLineBytes)
	} else {
		g.sc.r.Reset(src)
	}
	sc := g.sc
	type line struct {
		n    int
		text []byte
	}
	var before []line // the last g.context lines not yet printed
	after := 0        // context lines still to print after a match
	printed := 0      // the last line number printed
	matched := false
	for ln := 1; ; ln++ {
		text, _, err := sc.next()
		if err != nil {
			break
		}
		if g.re.Match(text) {
			if !matched {
				matched = true
				g.files++
			}
			for _, b := range before {
				if b.n > printed {
					g.emit(name, '-', b.n, b.text)
				}
			}
			before = before[:0]
			g.emit(name, ':', ln, text)
			printed = ln
			g.matches++
			after = g.context
			if g.matches >= g.limit {
				// Print the trailing context of the last match, then stop.
				for ; after > 0; after-- {
					text, _, err := sc.next()
					if err != nil {
						break
					}
					ln++
					g.emit(name, '-', ln, text)
				}
				return fs.SkipAll
			}
			continue
		}
		if after > 0 {
			g.emit(name, '-', ln, text)
			printed = ln
			after--
			continue
		}
		if g.context > 0 {
			if len(before) == g.context {
				before = append(before[:0], before[1:]...)
			}
			before = append(before, line{ln, bytes.Clone(text)})
		}
	}
	return nil
}

// load reads r into g.buf, all of it when it is at most grepWholeFile bytes
// (whole is then true), else the first grepWholeFile bytes.
func (g *grepper) load(r io.Reader) (data []byte, whole bool) {
	buf := g.buf[:0]
	for len(buf) < grepWholeFile {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), grepWholeFile)])
		buf = buf[:len(buf)+n]
		if err != nil {
			g.buf = buf
			return buf, true
		}
	}
	g.buf = buf
	return buf, false
}

func (g *grepper) emit(name string, sep byte, n int, text []byte) {
	s := strings.ToValidUTF8(string(text), "\uFFFD")
	if len(s) > GrepMaxLineChars {
		if r := []rune(s); len(r) > GrepMaxLineChars {
			s = string(r[:GrepMaxLineChars]) + "... [truncated]"
			g.shortened = true
		}
	}
	g.lines = append(g.lines, name+string(sep)+strconv.Itoa(n)+string(sep)+" "+s)
}
