// Package stream holds what every Cairn provider shares: the [Builder] that
// assembles the final assistant message while reporting deltas, and the
// turning of failures into [llm.Error]s (error responses classified by
// [llm.Classify], Retry-After, transport failures, aborts).
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
// A provider turns whatever its SDK returned into one *llm.Error here, once,
// and the agent loop branches on its Kind. The rules of what kind an error
// response is live in [llm.Classify] alone, shared with every provider.
package stream
