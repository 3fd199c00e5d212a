package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/tool"
)

// benchTree writes dirs×files files of lines lines each.
func benchTree(b *testing.B, dirs, files, lines int) (*Set, int64) {
	b.Helper()
	s, ws := newSet(b)
	var size int64
	for d := range dirs {
		for f := range files {
			var sb strings.Builder
			for l := range lines {
				fmt.Fprintf(&sb, "func f%d_%d_%d() { return compute(%d) } // filler text\n", d, f, l, l)
			}
			if f == 0 {
				sb.WriteString("// NEEDLE here\n")
			}
			writeFile(b, ws, filepath.Join(fmt.Sprintf("pkg%03d", d), fmt.Sprintf("file%03d.go", f)), sb.String())
			size += int64(sb.Len())
		}
	}
	return s, size
}

// BenchmarkGrepTree searches 100 directories × 20 files × 200 lines (~25MB).
func BenchmarkGrepTree(b *testing.B) {
	s, size := benchTree(b, 100, 20, 200)
	tl, _ := s.Get("grep")
	for _, c := range []struct{ name, args string }{
		{"literal", `{"pattern":"NEEDLE","literal":true}`},
		{"regexp", `{"pattern":"NEED+LE\\s+h"}`},
		{"ignoreCase", `{"pattern":"needle","ignoreCase":true}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				r, err := tl.Execute(context.Background(), tool.Call{Arguments: []byte(c.args)}, nil)
				if err != nil || r.IsError || strings.Count(text(r), "NEEDLE") != 100 {
					b.Fatalf("%v %.200s", err, text(r))
				}
			}
		})
	}
}

// BenchmarkFindTree globs over 2,000 files.
func BenchmarkFindTree(b *testing.B) {
	s, _ := benchTree(b, 100, 20, 1)
	tl, _ := s.Get("find")
	for b.Loop() {
		r, err := tl.Execute(context.Background(), tool.Call{Arguments: []byte(`{"pattern":"**/file00*.go"}`)}, nil)
		if err != nil || r.IsError {
			b.Fatal(err, text(r))
		}
	}
}

// BenchmarkBashEcho is the fixed cost of one bash call (fork, exec, group kill).
func BenchmarkBashEcho(b *testing.B) {
	s, _ := newSet(b)
	tl, _ := s.Get("bash")
	for b.Loop() {
		r, err := tl.Execute(context.Background(), tool.Call{Arguments: []byte(`{"command":"echo hi"}`)}, nil)
		if err != nil || text(r) != "hi\n" {
			b.Fatal(err, text(r))
		}
	}
}
