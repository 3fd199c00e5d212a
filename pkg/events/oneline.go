package events

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// One entry, one line. Every JSON value that comes from outside Cairn (a
// model's tool-call arguments, an approver's edited arguments, a hook's
// patch, an MCP result, a line of an imported pi file, an extension's
// answer) is checked and compacted by [CompactJSON] where it enters, so the
// value a component holds is the value the log stores. The encoders check
// and compact every raw member again, so no entry, message or envelope they
// write spans lines whatever its input: a JSON-lines reader splits Cairn's
// output on '\n' and gets one value per line.
//
// Entries stored before this rule may hold raw members across lines. Their
// stored bytes are what their digests cover and stay as they are; every
// JSON-lines output frames a value with [AppendLine], which re-encodes such
// a value on one line (the same JSON value) and copies any other as it is.

// CompactJSON checks that v is one JSON value and returns it on one line:
// without insignificant whitespace, U+2028 and U+2029 in strings escaped.
// v itself is returned when it already is. An invalid v is a
// [*FieldError] (errors.Is(err, [ErrInvalid])) naming no field.
func CompactJSON(v []byte) (json.RawMessage, error) {
	ix, err := jsonx.Check(v)
	if err != nil {
		return nil, fieldError(err)
	}
	ix.Release()
	if oneLine(v) {
		return v, nil
	}
	return jsonx.AppendCompact(make([]byte, 0, len(v)), v), nil
}

// oneLine reports whether v, valid JSON, is already as CompactJSON writes it
// as far as line breaks go: no '\n' or '\r' (which valid JSON holds only as
// whitespace) and no U+2028 or U+2029, and no space or tab at either end.
func oneLine(v []byte) bool {
	if len(v) == 0 || bytes.IndexByte(v, '\n') >= 0 || bytes.IndexByte(v, '\r') >= 0 ||
		bytes.Contains(v, []byte("\u2028")) || bytes.Contains(v, []byte("\u2029")) {
		return false
	}
	return bytes.Equal(jsonx.TrimSpace(v), v)
}

// AppendLine appends v, one JSON value, and '\n': the framing of every
// JSON-lines output. A v that would span lines ('\n', '\r', U+2028 or
// U+2029 in it) is written compacted, the same JSON value on one line; any
// other v is copied as it is. An invalid v that spans lines is an error and
// nothing is appended.
func AppendLine(dst, v []byte) ([]byte, error) {
	v = jsonx.TrimSpace(v)
	if oneLine(v) {
		dst = append(dst, v...)
		return append(dst, '\n'), nil
	}
	c, err := CompactJSON(v)
	if err != nil {
		return dst, fmt.Errorf("events: a JSON line: %w", err)
	}
	dst = append(dst, c...)
	return append(dst, '\n'), nil
}
