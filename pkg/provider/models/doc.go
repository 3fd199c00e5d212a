// Package models is Cairn's model registry: for each provider/model, the
// context window, the output limit, the prices per million tokens and whether
// the model reasons and reads images.
//
// The registry ships as models.json, embedded in the binary; an operator file
// of the same shape adds models or replaces entries (whole entries, matched by
// provider and id). Models of OpenAI-compatible endpoints that no file names
// get [Compatible]'s conservative defaults and no price.
//
// # Concurrency
//
// A [Registry] is immutable once built and safe for concurrent use.
//
// # Errors
//
// Lookups of unknown models fail with an error matching [ErrUnknownModel]
// that names the reference and the known models of that provider. A file
// that does not parse or validate fails naming the file, the entry and the
// field.
package models
