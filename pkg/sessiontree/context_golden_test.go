package sessiontree

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sessiontree/sessiontreetest"
)

// The golden cases of the context reducer are package sessiontreetest's
// (sessiontreetest/testdata/context/*.txt), shared with the tests of the
// harness and the gateway. `go test -run TestContextGolden -update`
// rewrites their want sections from today's code.
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
	cases, err := sessiontreetest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var bodies []string
			for _, w := range c.Wants {
				got := reduceAt(c.Entries, w.At)
				bodies = append(bodies, got)
				if !updating() && got != w.Body {
					t.Errorf("%s, section %q differs\n--- got ---\n%s--- want ---\n%s", c.Name, w.Section, got, w.Body)
				}
			}
			if updating() {
				file := filepath.Join("sessiontreetest", sessiontreetest.Dir, c.Name+".txt")
				old, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if out := c.Format(bodies); out != string(old) {
					if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
						t.Fatal(err)
					}
					t.Logf("rewrote %s", file)
				}
			}
		})
	}
}
