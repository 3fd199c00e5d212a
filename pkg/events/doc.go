// Package events defines every value that crosses a process boundary in Cairn:
// session entries (the log), client commands, live agent events, tool calls and
// their results, and the names of the streams and subjects that carry them.
//
// Entries keep the field names of the pi coding agent's session format
// (version 3), so a Cairn session converts to and from a pi session file
// (see [ReadPiFile] and [WritePiFile]).
//
// # Encoding
//
// Every type has one canonical JSON form. Encoding is deterministic: known
// fields in declaration order, then fields Cairn does not model (kept from the
// input, never dropped) in key order. Decoding the canonical form and encoding
// it again gives the same bytes.
//
// # Validation
//
// Decode functions are strict: an unknown entry, command or event type, a
// missing required field, or an invalid session or entry id is an error of type
// [*FieldError] that names the offending field with a JSON path such as
// "message.content[2].type". Unknown fields are not errors; they are kept.
// Every envelope Cairn writes carries the schema version [SchemaVersion] in its
// "v" field; a missing version means the current one, a different one is refused.
//
// # Concurrency
//
// Values are plain data with no internal synchronisation; the functions of the
// package are safe for concurrent use.
package events

// SchemaVersion is the version of Cairn's wire schema written in the "v" field
// of every envelope.
const SchemaVersion = 1
