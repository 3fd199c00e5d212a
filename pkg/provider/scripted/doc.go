// Package scripted is the scripted LLM provider of DESIGN §8: a provider
// like any other whose replies come from a script of rules, so tests, demos
// and benchmarks drive real agent runs deterministically.
//
// For each call the first rule whose match fits the last message of the
// context, and whose times is not used up, gives the reply. A reply streams
// its thinking and text in deltas at tokensPerSecond (a token is four
// characters; 0 = all at once) after delayMs, then its tool calls. A reply
// with an error fails the call with that status and message, classified as
// a real provider's error is, by [llm.Classify] (529 is retryable; a 400
// "prompt is too long" is a context overflow; a 429 insufficient_quota is
// not retried).
//
// # Concurrency
//
// A Provider is safe for concurrent use; the times counters are shared by
// all calls.
//
// # Errors
//
// [Parse] and [Load] refuse a script with an error naming the field (e.g.
// `rules[2].reply.error.status`). A call that no rule matches fails with
// [ErrNoRule], saying what the last message was.
//
// # Cancellation
//
// Cancelling ctx stops the wait and the stream at once; the partial message
// comes back with stop reason aborted and a KindAborted error.
package scripted
