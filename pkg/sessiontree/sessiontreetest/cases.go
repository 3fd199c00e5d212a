// Package sessiontreetest holds the golden cases of the context reducer,
// so that every test of something that builds or shows a context (the
// reducer itself, the harness, the gateway's `/context`) runs the same
// cases. The files are testdata/context/*.txt, embedded.
//
// A case is a sequence of sections, each opened by a line "-- name --":
//
//	# comments (free text before the first section)
//	-- entries --
//	one session log, one entry per line (canonical JSON, header first)
//	-- want --
//	the context at the active leaf
//	-- want at ID --
//	the context at entry ID ("null" = before the first entry)
//
// A want section holds the rendered result (package sessiontree's golden
// test renders it: model, thinking level, tools, the ruling compaction,
// then one message per line in canonical JSON), or "error: ..." when
// indexing or reducing fails.
//
// # Errors
//
// [Cases] and [Parse] name the file, and the line or section, that is not
// a well-formed case.
package sessiontreetest

import (
	"embed"
	"fmt"
	"path"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Dir is where the case files are, relative to this package's directory.
const Dir = "testdata/context"

//go:embed testdata/context/*.txt
var files embed.FS

// Case is one golden case: a session log and the contexts expected of it.
type Case struct {
	Name     string // the file's name without .txt
	Preamble string // the text before the first section
	Log      string // the entries section as written
	Entries  []events.Entry
	Wants    []Want
}

// Want is one expected context of a case.
type Want struct {
	Section string // the section's name: "want" or "want at ID"
	// At is where the context is built: "" = the active leaf, "null" =
	// before the first entry, else an entry id.
	At   string
	Body string // the rendered context, or "error: ..."
}

// Err reports whether the case expects an error here.
func (w Want) Err() bool { return strings.HasPrefix(w.Body, "error: ") }

// Cases returns every golden case, in file name order.
func Cases() ([]Case, error) {
	names, err := files.ReadDir(Dir)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, n := range names {
		data, err := files.ReadFile(path.Join(Dir, n.Name()))
		if err != nil {
			return nil, err
		}
		c, err := Parse(strings.TrimSuffix(n.Name(), ".txt"), string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name(), err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no golden cases in %s", Dir)
	}
	return out, nil
}

// Parse reads one case file.
func Parse(name, data string) (Case, error) {
	c := Case{Name: name}
	type section struct{ name, body string }
	var secs []section
	var pre strings.Builder
	for _, ln := range strings.SplitAfter(data, "\n") {
		t := strings.TrimRight(ln, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) >= 6 {
			secs = append(secs, section{name: strings.TrimSpace(t[3 : len(t)-3])})
			continue
		}
		if len(secs) == 0 {
			pre.WriteString(ln)
		} else {
			secs[len(secs)-1].body += ln
		}
	}
	if len(secs) == 0 || secs[0].name != "entries" {
		return c, fmt.Errorf(`the first section must be "-- entries --"`)
	}
	c.Preamble, c.Log = pre.String(), secs[0].body
	for n, ln := range strings.Split(c.Log, "\n") {
		if strings.TrimSpace(ln) == "" {
			continue
		}
		e, err := events.DecodeEntry([]byte(ln))
		if err != nil {
			return c, fmt.Errorf("entries line %d: %w", n+1, err)
		}
		c.Entries = append(c.Entries, e)
	}
	for _, s := range secs[1:] {
		at, ok := strings.CutPrefix(s.name, "want")
		at = strings.TrimSpace(at)
		if !ok || at != "" && !strings.HasPrefix(at, "at ") {
			return c, fmt.Errorf(`unknown section %q (want "want" or "want at ID")`, s.name)
		}
		c.Wants = append(c.Wants, Want{Section: s.name, At: strings.TrimSpace(strings.TrimPrefix(at, "at ")), Body: s.body})
	}
	if len(c.Wants) == 0 {
		return c, fmt.Errorf("no want section")
	}
	return c, nil
}

// Format writes the case back with bodies as its want sections' bodies (in
// order), for rewriting a golden file from today's results.
func (c Case) Format(bodies []string) string {
	var b strings.Builder
	b.WriteString(c.Preamble)
	b.WriteString("-- entries --\n" + c.Log)
	for i, w := range c.Wants {
		b.WriteString("-- " + w.Section + " --\n" + bodies[i])
	}
	return b.String()
}
