package tools

import (
	"bufio"
	"errors"
	"io"
)

// lineScanner reads lines of any length, keeping at most max bytes of each.
type lineScanner struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineScanner(r io.Reader, maxBytes int) *lineScanner {
	return &lineScanner{r: bufio.NewReaderSize(r, 64*1024), max: maxBytes}
}

// next returns the next line without its newline, cut to max bytes, and its
// full length. It returns io.EOF when no line is left; a last line without a
// newline is still a line. The line is valid until the next call.
func (s *lineScanner) next() (line []byte, size int, err error) {
	started := false
	line = s.buf[:0]
	defer func() { s.buf = line[:0] }()
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(chunk) > 0 {
			started = true
		}
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		size += len(body)
		if room := s.max - len(line); room > 0 {
			line = append(line, body[:min(room, len(body))]...)
		}
		switch {
		case err == nil:
			return line, size, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && started:
			return line, size, nil
		default:
			return nil, 0, err
		}
	}
}
