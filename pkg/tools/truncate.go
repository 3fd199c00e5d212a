package tools

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Default output caps, as in pi's coding agent.
const (
	DefaultMaxLines = 2000
	DefaultMaxBytes = 50 * 1024
)

// Truncation describes how a text output was capped; it is reported in a
// result's Details under "truncation".
type Truncation struct {
	Truncated   bool   `json:"truncated"`
	By          string `json:"truncatedBy,omitempty"` // "lines" or "bytes"
	TotalLines  int    `json:"totalLines"`
	TotalBytes  int64  `json:"totalBytes"`
	OutputLines int    `json:"outputLines"`
	OutputBytes int    `json:"outputBytes"`
	// LinePartial is set when the one line shown did not fit and only a part
	// of it is shown.
	LinePartial bool `json:"linePartial,omitempty"`
}

// limits are the output caps of a tool set.
type limits struct {
	lines int
	bytes int
}

// head keeps the first lines of lines that fit in l. The result's Content is
// the kept lines joined by newlines. When even the first line is larger than
// l.bytes nothing is kept and LinePartial is set.
func (l limits) head(lines []string) (string, Truncation) {
	t := Truncation{TotalLines: len(lines)}
	for _, s := range lines {
		t.TotalBytes += int64(len(s)) + 1
	}
	if t.TotalBytes > 0 {
		t.TotalBytes-- // no newline after the last line
	}
	var b strings.Builder
	n := 0
	for i, s := range lines {
		if i == l.lines {
			t.Truncated, t.By = true, "lines"
			break
		}
		size := len(s)
		if i > 0 {
			size++
		}
		if b.Len()+size > l.bytes {
			t.Truncated, t.By = true, "bytes"
			t.LinePartial = i == 0
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		n++
	}
	t.OutputLines, t.OutputBytes = n, b.Len()
	return b.String(), t
}

// tail keeps the end of a stream of output: at most l.lines lines and
// l.bytes bytes, counting everything it was given. It is not safe for
// concurrent use.
type tail struct {
	l        limits
	buf      []byte
	total    int64
	newlines int
}

func (t *tail) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	t.newlines += bytes.Count(p, []byte{'\n'})
	t.buf = append(t.buf, p...)
	keep := t.l.bytes + 1 // one more byte says whether the window starts a line
	if len(t.buf) > 2*keep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
	}
	return len(p), nil
}

// lines counts lines as an editor would: a final newline ends a line, it
// does not start one.
func (t *tail) lines() int {
	if t.total == 0 {
		return 0
	}
	n := t.newlines
	if t.buf[len(t.buf)-1] != '\n' {
		n++
	}
	return n
}

// snapshot returns the kept text (valid UTF-8) and how it was cut.
func (t *tail) snapshot() (string, Truncation) {
	tr := Truncation{TotalLines: t.lines(), TotalBytes: t.total}
	data := t.buf
	if len(data) > t.l.bytes {
		startsLine := data[len(data)-t.l.bytes-1] == '\n'
		data = data[len(data)-t.l.bytes:]
		tr.Truncated, tr.By = true, "bytes"
		if !startsLine {
			body := bytes.TrimSuffix(data, []byte{'\n'})
			if i := bytes.IndexByte(body, '\n'); i >= 0 {
				data = data[i+1:]
			} else {
				tr.LinePartial = true
				for len(data) > 0 && !utf8.RuneStart(data[0]) {
					data = data[1:]
				}
			}
		}
	}
	body := bytes.TrimSuffix(data, []byte{'\n'})
	n := bytes.Count(body, []byte{'\n'}) + 1
	if len(data) == 0 {
		n = 0
	}
	if n > t.l.lines {
		cut := n - t.l.lines
		for ; cut > 0; cut-- {
			data = data[bytes.IndexByte(data, '\n')+1:]
		}
		n = t.l.lines
		tr.Truncated, tr.By = true, "lines"
	}
	tr.OutputLines, tr.OutputBytes = n, len(data)
	return strings.ToValidUTF8(string(data), "\uFFFD"), tr
}

// formatSize renders a byte count for notes.
func formatSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
}
