package tools

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadText(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "a.txt", "one\ntwo\nthree\n")
	r := mustCall(t, s, "read", map[string]any{"path": "a.txt"})
	if got := text(r); got != "one\ntwo\nthree" {
		t.Fatalf("read = %q", got)
	}
	var d ReadDetails
	decodeDetails(t, r, &d)
	if d.TotalLines != 3 || d.StartLine != 1 || d.EndLine != 3 || d.Truncation != nil {
		t.Fatalf("details %+v", d)
	}
}

func TestReadRange(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "n.txt", numbered(10))
	r := mustCall(t, s, "read", map[string]any{"path": "n.txt", "offset": 3, "limit": 2})
	want := "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]"
	if got := text(r); got != want {
		t.Fatalf("read range = %q, want %q", got, want)
	}
	r = mustCall(t, s, "read", map[string]any{"path": "n.txt", "offset": 9})
	if got := text(r); got != "line 9\nline 10" {
		t.Fatalf("read tail = %q", got)
	}
	r, err := call(t, s, "read", map[string]any{"path": "n.txt", "offset": 11})
	if err != nil || !r.IsError || !strings.Contains(text(r), "Offset 11 is beyond the end of the file (10 lines total)") {
		t.Fatalf("offset past end: %v %q", err, text(r))
	}
}

func TestReadTruncatesByLines(t *testing.T) {
	s, ws := newSet(t, WithOutputLimit(5, 1<<20))
	writeFile(t, ws, "n.txt", numbered(12))
	r := mustCall(t, s, "read", map[string]any{"path": "n.txt"})
	want := "line 1\nline 2\nline 3\nline 4\nline 5\n\n[Showing lines 1-5 of 12. Use offset=6 to continue.]"
	if got := text(r); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	var d ReadDetails
	decodeDetails(t, r, &d)
	if d.Truncation == nil || d.Truncation.By != "lines" || d.Truncation.OutputLines != 5 || d.Truncation.TotalLines != 12 {
		t.Fatalf("truncation %+v", d.Truncation)
	}
	// Following the note reads the rest.
	r = mustCall(t, s, "read", map[string]any{"path": "n.txt", "offset": 11})
	if got := text(r); got != "line 11\nline 12" {
		t.Fatalf("continuation = %q", got)
	}
}

func TestReadTruncatesByBytes(t *testing.T) {
	s, ws := newSet(t, WithOutputLimit(1000, 100))
	writeFile(t, ws, "n.txt", numbered(50)) // ~7 bytes a line
	r := mustCall(t, s, "read", map[string]any{"path": "n.txt", "offset": 2})
	got := text(r)
	body, note, _ := strings.Cut(got, "\n\n")
	if len(body) > 100 {
		t.Fatalf("body is %d bytes, over the cap", len(body))
	}
	lines := strings.Split(body, "\n")
	if lines[0] != "line 2" {
		t.Fatalf("first line %q", lines[0])
	}
	last := 2 + len(lines) - 1
	wantNote := fmt.Sprintf("[Showing lines 2-%d of 50 (100B limit). Use offset=%d to continue.]", last, last+1)
	if note != wantNote {
		t.Fatalf("note %q, want %q", note, wantNote)
	}
}

func TestReadLongFirstLine(t *testing.T) {
	s, ws := newSet(t, WithOutputLimit(1000, 100))
	writeFile(t, ws, "long.txt", "short\n"+strings.Repeat("x", 500)+"\n")
	r := mustCall(t, s, "read", map[string]any{"path": "long.txt", "offset": 2})
	wantContains(t, text(r), "[Line 2 is 500B, over the 100B limit. Use bash: sed -n '2p' long.txt | head -c 100]")
}

func TestReadErrors(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "bin", "abc\x00def")
	if err := os.Mkdir(filepath.Join(ws, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "empty", "")
	results := map[string]string{
		"missing.txt": "File not found: missing.txt",
		"d":           "d is a directory; use ls",
		"bin":         "bin is a binary file",
	}
	for p, want := range results {
		r, err := call(t, s, "read", map[string]any{"path": p})
		if err != nil || !r.IsError || !strings.Contains(text(r), want) {
			t.Errorf("read %s = %v %q, want error result %q", p, err, text(r), want)
		}
	}
	if r := mustCall(t, s, "read", map[string]any{"path": "empty"}); text(r) != "(empty file)" {
		t.Errorf("empty file: %q", text(r))
	}
}

func TestReadArgErrors(t *testing.T) {
	s, _ := newSet(t)
	cases := map[string]string{
		`{}`:                               "path: is required",
		`{"path":null}`:                    "path: is required",
		`{"path":"a","offset":0}`:          "offset: must be at least 1",
		`{"path":"a","limit":-1}`:          "limit: must be at least 1",
		`{"path":"a","offset":"3"}`:        "offset: must be an integer",
		`{"path":"a","offset":1.5}`:        "offset: must be an integer",
		`{"path":"a","bogus":1}`:           `bogus: unknown argument of read (it takes path, offset, limit)`,
		`[]`:                               "arguments must be a JSON object",
		`{"path":7}`:                       "path: must be a string",
		`{"path":"a","offset":null}x`:      "arguments must be a JSON object",
		`{"path":"a","limit":99999999999}`: "",
	}
	for args, want := range cases {
		_, err := call(t, s, "read", args)
		if want == "" {
			continue // only must not panic
		}
		if !errors.Is(err, events.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("read %s: %v, want %q", args, err, want)
		}
	}
}

func TestReadImages(t *testing.T) {
	s, ws := newSet(t)
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	encoders := map[string]func(*bytes.Buffer) error{
		"image/png":  func(b *bytes.Buffer) error { return png.Encode(b, img) },
		"image/jpeg": func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) },
		"image/gif":  func(b *bytes.Buffer) error { return gif.Encode(b, img, nil) },
		// A minimal RIFF/WEBP header is what sniffing looks at.
		"image/webp": func(b *bytes.Buffer) error {
			b.WriteString("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")
			return nil
		},
	}
	for mime, enc := range encoders {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			t.Fatal(err)
		}
		name := "pic-" + strings.TrimPrefix(mime, "image/") + ".bin" // no extension hint: sniffed
		writeFile(t, ws, name, b.String())
		r := mustCall(t, s, "read", map[string]any{"path": name})
		if len(r.Content) != 2 || r.Content[1].Type != events.BlockImage {
			t.Fatalf("%s: content %+v", mime, r.Content)
		}
		blk := r.Content[1]
		if blk.MimeType != mime {
			t.Errorf("%s: mimeType %q", mime, blk.MimeType)
		}
		data, err := base64.StdEncoding.DecodeString(blk.Data)
		if err != nil || !bytes.Equal(data, b.Bytes()) {
			t.Errorf("%s: data does not round-trip (%v)", mime, err)
		}
		wantContains(t, text(r), "Read image file ["+mime+"]")
	}
}

func TestReadImageTooLarge(t *testing.T) {
	s, ws := newSet(t)
	f, err := os.Create(filepath.Join(ws, "big.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\x89PNG\r\n\x1a\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxImageBytes + 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := call(t, s, "read", map[string]any{"path": "big.png"})
	if err != nil || !r.IsError || !strings.Contains(text(r), "over the 5.0MB limit for images") {
		t.Fatalf("big image: %v %q", err, text(r))
	}
}

// A FIFO is refused without blocking.
func TestReadWriteFIFO(t *testing.T) {
	s, ws := newSet(t)
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := map[string]any{
		"read":  map[string]any{"path": "pipe"},
		"write": map[string]any{"path": "pipe", "content": "x"},
		"edit":  map[string]any{"path": "pipe", "edits": []ed{{"oldText": "a", "newText": "b"}}},
	}
	for name, args := range calls {
		r, err := call(t, s, name, args)
		if err != nil || !r.IsError || !strings.Contains(text(r), "pipe is not a regular file") {
			t.Errorf("%s on a FIFO: %v %q", name, err, text(r))
		}
	}
}
