// Package stream holds what every Cairn provider shares: the [Builder] that
// assembles the final assistant message while reporting deltas, and the
// classification of failures into [llm.Error] kinds (HTTP status,
// Retry-After, context-overflow wording, transport failures, aborts).
//
// # Ordering
//
// A Builder reports each delta before the next one is accepted, on the
// goroutine that feeds it; ContentIndex is the index of the block in the final
// message.
//
// # Concurrency
//
// A Builder belongs to one Stream call and is not safe for concurrent use.
//
// # Errors
//
// Classification happens here, once: a provider turns whatever its SDK
// returned into one *llm.Error and the agent loop branches on its Kind.
package stream
