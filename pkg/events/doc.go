// Package events defines every value that crosses a process boundary in Cairn:
// session entries (the log), client commands, live agent events, tool calls and
// their results, and the names of the streams and subjects that carry them.
//
// Entries keep the field names of the pi coding agent's session format
// (version 3), so a Cairn session converts to and from a pi session file:
// [ReadPiFile] reads versions 1 to 3 and migrates them to 3, [WritePiFile]
// writes version 3 (see docs/pi-interop.md).
//
// # Encoding
//
// Every type has one canonical JSON form. Encoding is deterministic: known
// fields in declaration order, then fields Cairn does not model (kept from the
// input, never dropped) in key order. Decoding the canonical form and encoding
// it again gives the same bytes; the golden files in testdata/golden and the
// fuzz tests check it for every decoder.
//
// Entries, messages, content blocks, usage and commands keep the members they
// do not model in Extra (usage and cost keep them internally), so values
// written by a newer Cairn or by pi survive a round trip. Events, tool calls
// and tool results are Cairn's own, versioned envelopes: members they do not
// model are ignored. Keys are matched exactly, case included.
//
// A decoder validates its whole input once, then reads nested values from
// spans of it (no level validates or copies the levels below it again).
// Decoded values never share memory with the input: a caller may reuse its
// buffer as soon as the decode function returns.
//
// Encoders append to one byte slice, sized once, and write strings as
// encoding/json does without HTML escaping (invalid UTF-8 becomes U+FFFD;
// U+2028 and U+2029 are escaped); keys of unmodelled members are written as
// json.Marshal writes them, HTML escaped. Raw JSON members (details,
// unmodelled members) are written as they are in entries, messages and
// blocks (tool arguments compacted, when valid), and compacted, and refused
// if invalid, in events, tool calls and tool results: the bytes
// encoding/json wrote for them before.
//
// # Errors
//
// Decode functions are strict: an unknown entry, command or event type, a
// missing required field, a value of the wrong JSON kind, or an invalid
// session or entry id is an error of type [*FieldError] that names the
// offending field with a JSON path such as "message.content[2].type";
// errors.Is(err, [ErrInvalid]) holds for all of them. Reading a pi file adds
// the line: [*LineError] wraps the FieldError. Every envelope Cairn writes
// carries the schema version [SchemaVersion] in its "v" field; a missing
// version means the current one, a different one is refused.
//
// # Concurrency
//
// Values are plain data with no internal synchronisation; the functions of the
// package are safe for concurrent use.
package events

// SchemaVersion is the version of Cairn's wire schema written in the "v" field
// of every envelope.
const SchemaVersion = 1
