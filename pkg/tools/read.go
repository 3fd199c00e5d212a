package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// MaxImageBytes is the largest image read returns (providers refuse more).
const MaxImageBytes = 5 * 1024 * 1024

// sniffLen is how much of a file decides whether it is an image or binary.
const sniffLen = 8000

const readSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "Path to the file to read, relative to the workspace (or absolute inside it)"},
    "offset": {"type": "integer", "minimum": 1, "description": "Line number to start reading from (1-indexed)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to read"}
  },
  "required": ["path"],
  "additionalProperties": false
}`

// readTool reads a text file (a range of lines) or an image.
type readTool struct{ env *env }

type readArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

// ReadDetails is the Details of a read result.
type ReadDetails struct {
	Path       string      `json:"path"`
	MimeType   string      `json:"mimeType,omitempty"` // images only
	Bytes      int64       `json:"bytes"`
	StartLine  int         `json:"startLine,omitempty"`
	EndLine    int         `json:"endLine,omitempty"`
	TotalLines int         `json:"totalLines,omitempty"`
	Truncation *Truncation `json:"truncation,omitempty"`
}

// Spec describes read.
func (t *readTool) Spec() events.ToolSpec {
	return spec("read", fmt.Sprintf("Read the contents of a file. Supports text files and images (png, jpeg, gif, webp), which are returned as image attachments. "+
		"Text output is truncated to %d lines or %s, whichever is hit first; use offset/limit for large files and continue with offset until complete.",
		t.env.out.lines, formatSize(int64(t.env.out.bytes))), readSchema, true)
}

// Execute reads the file.
func (t *readTool) Execute(ctx context.Context, call tool.Call, _ func(tool.Result)) (tool.Result, error) {
	a, err := decodeRead(call.Arguments)
	if err != nil {
		return tool.Result{}, err
	}
	ws, rel, release, err := t.env.resolveFile(call, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	defer release()
	// Stat before opening: opening a FIFO would block.
	fi, res, err := statFile(ws, "read", a.Path, rel)
	if res != nil || err != nil {
		return deref(res), err
	}
	switch {
	case fi.IsDir():
		return errorResult(fmt.Sprintf("%s is a directory; use ls to list it", a.Path), nil), nil
	case !fi.Mode().IsRegular():
		return errorResult(fmt.Sprintf("%s is not a regular file (%s)", a.Path, fi.Mode().Type()), nil), nil
	}
	if err := ws.refuseLinked(a.Path, fi); err != nil {
		return tool.Result{}, err
	}
	f, err := ws.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", a.Path, err)
	}
	defer func() { _ = f.Close() }() // opened read-only
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() || linked(fi) {
		return errorResult(fmt.Sprintf("%s changed while being opened; try again", a.Path), nil), nil
	}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return tool.Result{}, fmt.Errorf("read %s: %w", a.Path, err)
	}
	head = head[:n]
	d := ReadDetails{Path: a.Path, Bytes: fi.Size()}
	if mime := imageType(head); mime != "" {
		return t.image(f, head, a.Path, mime, d)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return errorResult(fmt.Sprintf("%s is a binary file (%s); inspect it with bash (e.g. file, xxd, od)", a.Path, formatSize(fi.Size())), d), nil
	}
	return t.text(ctx, io.MultiReader(bytes.NewReader(head), f), a, d)
}

// decodeRead decodes and checks read's arguments.
func decodeRead(raw json.RawMessage) (readArgs, error) {
	var a readArgs
	if err := decodeArgs("read", raw, &a, []string{"path", "offset", "limit"}, []string{"path"}); err != nil {
		return a, err
	}
	if a.Offset != nil && *a.Offset < 1 {
		return a, argErr("offset", "must be at least 1 (lines are numbered from 1), got %d", *a.Offset)
	}
	if a.Limit != nil && *a.Limit < 1 {
		return a, argErr("limit", "must be at least 1, got %d", *a.Limit)
	}
	return a, nil
}

// ReadPath returns the path a read call's arguments name; false when they
// do not decode (the call then fails as read would fail it).
func ReadPath(args json.RawMessage) (string, bool) {
	a, err := decodeRead(args)
	return a.Path, err == nil
}

// ReadText answers a read call from text held in memory, as if text were
// the content of the file the call names: read's argument checks, line
// window, default output limits and result. A caller that serves some
// paths itself (the orchestrator serves the tenant's skills) uses it, so
// the model cannot tell those from files.
func ReadText(ctx context.Context, call tool.Call, text string) (tool.Result, error) {
	a, err := decodeRead(call.Arguments)
	if err != nil {
		return tool.Result{}, err
	}
	t := &readTool{env: &env{out: limits{lines: DefaultMaxLines, bytes: DefaultMaxBytes}}}
	return t.text(ctx, strings.NewReader(text), a, ReadDetails{Path: a.Path, Bytes: int64(len(text))})
}

// imageType returns the MIME type of an image format models accept, or "".
func imageType(head []byte) string {
	switch m := http.DetectContentType(head); m {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return m
	}
	return ""
}

func (t *readTool) image(f io.Reader, head []byte, path, mime string, d ReadDetails) (tool.Result, error) {
	if d.Bytes > MaxImageBytes {
		return errorResult(fmt.Sprintf("%s is an image of %s, over the %s limit for images", path, formatSize(d.Bytes), formatSize(MaxImageBytes)), d), nil
	}
	rest, err := io.ReadAll(io.LimitReader(f, MaxImageBytes+1-int64(len(head))))
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	data := append(head, rest...)
	if len(data) > MaxImageBytes {
		return errorResult(fmt.Sprintf("%s grew over the %s limit for images while being read", path, formatSize(MaxImageBytes)), d), nil
	}
	d.MimeType, d.Bytes = mime, int64(len(data))
	return tool.Result{
		Content: []events.Block{
			events.TextBlock(fmt.Sprintf("Read image file [%s]", mime)),
			{Type: events.BlockImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mime},
		},
		Details: details(d),
	}, nil
}

func (t *readTool) text(ctx context.Context, r io.Reader, a readArgs, d ReadDetails) (tool.Result, error) {
	lim := t.env.out
	start := 1
	if a.Offset != nil {
		start = *a.Offset
	}
	want := -1 // lines the caller asked for; -1 = to the end
	if a.Limit != nil {
		want = *a.Limit
	}
	// Keep the window's lines until the cap is certainly exceeded; count all.
	var kept []string
	keptBytes := 0
	firstSize := 0
	sc := newLineScanner(r, lim.bytes+1)
	total := 0
	var windowBytes int64
	for {
		line, size, err := sc.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return tool.Result{}, fmt.Errorf("read %s: %w", a.Path, err)
		}
		total++
		if total%4096 == 0 && ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		inWindow := total >= start && (want < 0 || total < start+want)
		if inWindow {
			windowBytes += int64(size) + 1
		}
		if !inWindow || len(kept) > lim.lines || keptBytes > lim.bytes {
			continue
		}
		if len(kept) == 0 {
			firstSize = size
		}
		kept = append(kept, strings.ToValidUTF8(string(line), "\uFFFD"))
		keptBytes += len(line) + 1
	}
	d.TotalLines = total
	if total == 0 {
		if start > 1 {
			return errorResult(fmt.Sprintf("Offset %d is beyond the end of the file (%s is empty)", start, a.Path), d), nil
		}
		return textResult("(empty file)", d), nil
	}
	if start > total {
		return errorResult(fmt.Sprintf("Offset %d is beyond the end of the file (%d lines total)", start, total), d), nil
	}
	end := total
	if want >= 0 {
		end = min(total, start+want-1)
	}
	out, tr := lim.head(kept)
	if tr.LinePartial {
		d.Truncation = &tr
		return textResult(fmt.Sprintf("[Line %d is %s, over the %s limit. Use bash: sed -n '%dp' %s | head -c %d]",
			start, formatSize(int64(firstSize)), formatSize(int64(lim.bytes)), start, a.Path, lim.bytes), d), nil
	}
	d.StartLine = start
	if tr.Truncated {
		last := start + tr.OutputLines - 1
		tr.TotalLines, tr.TotalBytes = end-start+1, windowBytes-1
		d.EndLine, d.Truncation = last, &tr
		limit := ""
		if tr.By == "bytes" {
			limit = fmt.Sprintf(" (%s limit)", formatSize(int64(lim.bytes)))
		}
		return textResult(fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d%s. Use offset=%d to continue.]", out, start, last, total, limit, last+1), d), nil
	}
	d.EndLine = end
	if end < total {
		return textResult(fmt.Sprintf("%s\n\n[%d more lines in file. Use offset=%d to continue.]", out, total-end, end+1), d), nil
	}
	return textResult(out, d), nil
}
