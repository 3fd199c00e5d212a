package sessiontree

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// The golden cases of the context reducer live in testdata/context/*.txt.
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
// A want section holds the rendered result: model, thinking level, tools,
// the ruling compaction, then one message per line in canonical JSON; or
// "error: ..." when indexing or reducing fails. `go test -run
// TestContextGolden -update` rewrites the want sections from today's code.
func init() {
	// Registered only if no other test file of the package did (a second
	// registration of the same name panics).
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata from the current output")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

type section struct {
	name string // "entries", "want", "want at ID"
	body string
}

func parseSections(data string) (preamble string, secs []section, err error) {
	lines := strings.SplitAfter(data, "\n")
	var cur *section
	var pre strings.Builder
	for _, ln := range lines {
		t := strings.TrimRight(ln, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) >= 6 {
			secs = append(secs, section{name: strings.TrimSpace(t[3 : len(t)-3])})
			cur = &secs[len(secs)-1]
			continue
		}
		if cur == nil {
			pre.WriteString(ln)
		} else {
			cur.body += ln
		}
	}
	if len(secs) == 0 || secs[0].name != "entries" {
		return "", nil, fmt.Errorf("the first section must be \"-- entries --\"")
	}
	return pre.String(), secs, nil
}

func decodeLog(body string) ([]events.Entry, error) {
	var entries []events.Entry
	for n, ln := range strings.Split(body, "\n") {
		if strings.TrimSpace(ln) == "" {
			continue
		}
		e, err := events.DecodeEntry([]byte(ln))
		if err != nil {
			return nil, fmt.Errorf("entries line %d: %w", n+1, err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// reduceAt indexes the log and reduces the path to at ("" = the active leaf,
// "null" = before the first entry), rendering the result.
func reduceAt(entries []events.Entry, at string) string {
	x, err := NewIndex(entries)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var path []events.Entry
	switch at {
	case "":
		path = x.ActivePath()
	case "null":
	default:
		if path, err = x.Path(at); err != nil {
			return "error: " + err.Error() + "\n"
		}
	}
	ctx, err := BuildContext(x.Header(), path)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	if err := partsAgree(x.Header(), path, ctx); err != nil {
		return "error: " + err.Error() + "\n"
	}
	return render(ctx)
}

// partsAgree checks that BuildParts gives the context BuildContext gives,
// and parts whose messages, concatenated, are its messages.
func partsAgree(header *events.Entry, path []events.Entry, want Context) error {
	got, parts, err := BuildParts(header, path)
	if err != nil {
		return fmt.Errorf("BuildParts: %w", err)
	}
	var msgs []events.Message
	for k, p := range parts {
		if k > 0 && p.Index <= parts[k-1].Index && (want.CompactionID == "" || k > 1) {
			return fmt.Errorf("BuildParts: part %d is entry %d, after entry %d", k, p.Index, parts[k-1].Index)
		}
		msgs = append(msgs, p.Messages...)
	}
	if render(got) != render(want) || render(Context{Messages: msgs}) != render(Context{Messages: want.Messages}) {
		return fmt.Errorf("BuildParts differs from BuildContext:\n%s%s", render(got), render(Context{Messages: msgs}))
	}
	return nil
}

func render(ctx Context) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "model: %s\n", orNone(ctx.Model))
	fmt.Fprintf(&b, "thinkingLevel: %s\n", ctx.ThinkingLevel)
	if ctx.Tools == nil {
		b.WriteString("tools: (default)\n")
	} else {
		tools, _ := json.Marshal(ctx.Tools)
		fmt.Fprintf(&b, "tools: %s\n", tools)
	}
	switch {
	case ctx.CompactionID == "":
		b.WriteString("compaction: (none)\n")
	case ctx.FirstKeptMissing:
		fmt.Fprintf(&b, "compaction: %s (firstKeptEntryId not on the path: nothing kept)\n", ctx.CompactionID)
	default:
		fmt.Fprintf(&b, "compaction: %s\n", ctx.CompactionID)
	}
	fmt.Fprintf(&b, "messages: %d\n", len(ctx.Messages))
	for _, m := range ctx.Messages {
		line, err := json.Marshal(m)
		if err != nil {
			line = []byte("marshal error: " + err.Error())
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func TestContextGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "context", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden cases in testdata/context")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			pre, secs, err := parseSections(string(data))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			entries, err := decodeLog(secs[0].body)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var out strings.Builder
			out.WriteString(pre)
			out.WriteString("-- entries --\n" + secs[0].body)
			wants := 0
			for _, s := range secs[1:] {
				at, ok := strings.CutPrefix(s.name, "want")
				at = strings.TrimSpace(at)
				if !ok || at != "" && !strings.HasPrefix(at, "at ") {
					t.Fatalf("%s: unknown section %q (want \"want\" or \"want at ID\")", file, s.name)
				}
				at = strings.TrimSpace(strings.TrimPrefix(at, "at "))
				wants++
				got := reduceAt(entries, at)
				out.WriteString("-- " + s.name + " --\n" + got)
				if !updating() && got != s.body {
					t.Errorf("%s, section %q differs\n--- got ---\n%s--- want ---\n%s", file, s.name, got, s.body)
				}
			}
			if wants == 0 {
				t.Fatalf("%s: no want section", file)
			}
			if updating() && out.String() != string(data) {
				if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("rewrote %s", file)
			}
		})
	}
}
