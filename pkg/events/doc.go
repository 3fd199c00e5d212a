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
// it again gives the same bytes; the golden files in testdata/golden, the
// frozen outcomes in testdata/outcomes and the fuzz tests check it for every
// decoder.
//
// Entries, messages, content blocks, usage and commands keep the members they
// do not model in Extra (usage and cost keep them internally), so values
// written by a newer Cairn or by pi survive a round trip. Events, tool calls
// and tool results are Cairn's own, versioned envelopes: members they do not
// model are ignored. Keys are matched exactly, case included; the envelopes'
// fields are decoded by encoding/json, which matches the keys of their
// nested objects (an image of a prompt, a delta, a queue) in any case.
//
// A decoder validates its whole input once, then reads nested values from
// spans of it (no level validates or copies the levels below it again).
// Decoded values never share memory with the input: a caller may reuse its
// buffer as soon as the decode function returns.
//
// Encoders append to one byte slice, sized once. Strings are written with ",
// \ and control characters escaped (\b \f \n \r \t, else \u00XX), invalid
// UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and \u2029, and everything
// else as it is; keys of unmodelled members the same way, with <, > and &
// also escaped (\u003c, \u003e, \u0026). Integers are written in decimal;
// other numbers in the shortest form that reads back the same, plain between
// 1e-6 and 1e21 and with an exponent outside (1e+21, 1e-7). Raw JSON members
// (arguments, details, data, unmodelled members) are checked and compacted,
// U+2028 and U+2029 in their strings escaped, and refused if invalid, in
// every type: no value the package writes spans lines (oneline.go: one
// entry, one line); raw members that an envelope's decoder read keep <, >
// and & escaped.
//
// # Errors
//
// Decode functions are strict: invalid JSON, a value that is not an object,
// an unknown entry, command or event type, a missing required field, a
// value of the wrong JSON kind, or an invalid session or entry id is an
// error of type [*FieldError] that names the offending field with a JSON
// path such as "message.content[2].type" (members by key, elements by
// index; "" for the whole input); errors.Is(err, [ErrInvalid]) holds for
// all of them. Reading a pi file adds the line: [*LineError] wraps the
// FieldError ("line 3: ...").
//
// Error texts are Cairn's own, the same on every Go release: the path, a
// colon and the problem, whose forms are
//
//   - invalid JSON at offset 17: want ',' or '}', got 'x' — the input is not
//     JSON; the offset (from 0) is that of the first byte that cannot be
//     there; the whole input is refused wherever the problem is, even inside
//     members Cairn keeps without reading them;
//   - must be a JSON object, got an array — a value of the wrong kind: "a
//     string", "a boolean", "an integer", "a number", "an array", "an
//     object" (and "null", "nothing" for what was found);
//   - must be an integer between 0 and 18446744073709551615, got -1 — a
//     number that does not fit, written as it is in the input;
//   - is required; unknown entry type "x" (want ...); and the rules of ids,
//     versions and each type's fields, worded in the functions that check
//     them.
//
// Encoders fail only on what JSON cannot hold: a NaN or infinite number, or
// an invalid raw member of an envelope ("arguments: a raw value must be
// valid JSON, got ..."). Tests pin the texts (errors_test.go and
// testdata/outcomes); callers branch on the type and Field, never on the
// text.
//
// Every envelope Cairn writes carries the schema version [SchemaVersion]
// in its "v" field; a missing version means the current one, a different
// one is refused.
//
// # Names
//
// [Names] is the one owner of the names of Cairn's streams, KV buckets,
// object stores, shared consumers and subjects under a prefix (DESIGN §2);
// pkg/provision owns their configurations, and a lint test
// (internal/lint) refuses a name spelled out anywhere else in production
// code. [Names.Patterns] gives one subject pattern per stream and bucket
// (the KV ones as $KV.<bucket>.>, object stores as $O.<bucket>.>), the form
// a NATS permission list takes; [KVStream], [KVSubject], [ObjectStream]
// name what nats.go builds under a bucket.
//
// # Concurrency
//
// Values are plain data with no internal synchronisation; the functions of the
// package are safe for concurrent use.
package events

// SchemaVersion is the version of Cairn's wire schema written in the "v" field
// of every envelope.
const SchemaVersion = 1
