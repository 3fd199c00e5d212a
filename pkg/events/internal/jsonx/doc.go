// Package jsonx is the JSON engine under pkg/events' per-type readers and
// writers: a validator that indexes a document once, readers that take the
// members of an object out of spans of it, and a writer that appends
// members to one byte slice. It knows nothing of Cairn's types; pkg/events
// says, field by field, what each type reads and writes.
//
// # Reading
//
// A document is validated once, all of it, by [Check] or [NewIndex] (through
// [ReadObject] or [IndexObject]): one JSON value per RFC 8259 with only
// whitespace around it, strings holding any byte but a control character
// (invalid UTF-8 included), at most 10000 nested arrays and objects. The
// index records where every array and object ends, so that readers of
// nested values ([ReadValidObject], [Elements]) skip containers without
// scanning them again: decoding is linear in the input.
//
// A [Reader] splits an object into its members once. Keys are matched
// exactly, case included; of a key given twice the last value counts.
// Strings decode with escapes resolved and each byte of invalid UTF-8, and
// each \u escape of a lone surrogate, replaced by U+FFFD. Nothing a reader
// returns aliases the input: the caller may reuse its buffer as soon as
// decoding returns.
//
// # Writing
//
// A [Writer] writes members in call order. Strings are quoted with ", \ and
// control characters escaped (\b \f \n \r \t, else \u00XX), invalid UTF-8
// written as \ufffd, U+2028 and U+2029 as \u2028 and \u2029, everything
// else as it is; keys are escaped the same way and also have <, > and &
// escaped (\u003c, \u003e, \u0026). Integers are written in decimal; other
// numbers in the shortest form that reads back the same, in plain decimal
// between 1e-6 and 1e21 and in exponent form (1e+21, 1e-7) outside.
//
// # Errors
//
// Problems with a value are of type [*Error]: the value's path, e.g.
// "message.content[2].type" ("" for the document), and what is wrong, in
// words of this package, the same whatever the Go release:
//
//   - invalid JSON at offset 17: want ',' or '}', got 'x' — [Check] says where
//     (the 0-based offset of the first byte that cannot be there) and why:
//     want a value, a member's key, ':' after it, ',' or a closing bracket, a
//     digit, a literal, the end of the input; the input ends inside a string;
//     a control character or an invalid escape in a string; more than 10000
//     nested arrays and objects. What was found is 'x' for printable ASCII,
//     byte 0x0b otherwise, or the end of the input;
//   - must be a string, got a number — a value of the wrong kind ([Kind]
//     names what was found); a number that does not fit is named as it is
//     written: must be an integer between -128 and 127, got 128;
//   - is required, is required (null is allowed).
//
// [Reader.DecodeKnown] lets encoding/json decide, and when it refuses finds
// the first member it refused, in key order, and says why in these words.
//
// # Concurrency
//
// Readers, indexes and writers belong to one goroutine; the functions of the
// package are safe for concurrent use.
package jsonx
