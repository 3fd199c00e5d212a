package tools

import (
	"strings"
	"testing"
)

func TestHead(t *testing.T) {
	l := limits{lines: 3, bytes: 10}
	cases := []struct {
		in      []string
		out     string
		by      string
		partial bool
	}{
		{[]string{"a", "b"}, "a\nb", "", false},
		{[]string{"a", "b", "c", "d"}, "a\nb\nc", "lines", false},
		{[]string{"aaaa", "bbbb", "cccc"}, "aaaa\nbbbb", "bytes", false},
		{[]string{strings.Repeat("x", 11)}, "", "bytes", true},
		{nil, "", "", false},
	}
	for _, c := range cases {
		out, tr := l.head(c.in)
		if out != c.out || tr.By != c.by || tr.LinePartial != c.partial || tr.Truncated != (c.by != "") || tr.TotalLines != len(c.in) {
			t.Errorf("head(%q) = %q, %+v", c.in, out, tr)
		}
	}
}

// The tail gives the same answer however the output is split into writes,
// and keeps bounded memory.
func TestTailChunking(t *testing.T) {
	var all strings.Builder
	for i := range 1000 {
		all.WriteString(strings.Repeat("z", i%17))
		all.WriteString("\n")
	}
	want := (&tail{l: limits{lines: 20, bytes: 150}})
	want.Write([]byte(all.String()))
	wantText, wantTr := want.snapshot()
	for _, chunk := range []int{1, 7, 64, 4096} {
		tl := &tail{l: limits{lines: 20, bytes: 150}}
		s := all.String()
		for len(s) > 0 {
			n := min(chunk, len(s))
			tl.Write([]byte(s[:n]))
			s = s[n:]
			if len(tl.buf) > 2*(151) {
				t.Fatalf("chunk %d: buffer grew to %d", chunk, len(tl.buf))
			}
		}
		got, tr := tl.snapshot()
		if got != wantText || tr != wantTr {
			t.Fatalf("chunk %d: %q %+v, want %q %+v", chunk, got, tr, wantText, wantTr)
		}
	}
	if wantTr.TotalLines != 1000 || wantTr.TotalBytes != int64(all.Len()) || !wantTr.Truncated {
		t.Fatalf("totals %+v", wantTr)
	}
	if !strings.HasSuffix(wantText, strings.Repeat("z", 999%17)+"\n") {
		t.Fatalf("tail does not end with the last line: %q", wantText)
	}
}

func TestTailSmall(t *testing.T) {
	tl := &tail{l: limits{lines: 5, bytes: 100}}
	tl.Write([]byte("a\nb"))
	got, tr := tl.snapshot()
	if got != "a\nb" || tr.Truncated || tr.TotalLines != 2 || tr.OutputLines != 2 {
		t.Fatalf("%q %+v", got, tr)
	}
	empty := &tail{l: limits{lines: 5, bytes: 100}}
	if got, tr := empty.snapshot(); got != "" || tr.TotalLines != 0 {
		t.Fatalf("empty: %q %+v", got, tr)
	}
}
