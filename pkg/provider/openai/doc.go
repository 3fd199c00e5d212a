// Package openai is Cairn's provider for OpenAI, built on the official Go
// SDK: the Responses API ([NewResponses]: text, reasoning summaries with the
// encrypted reasoning item kept for the next request, function calls,
// images) and Chat Completions ([NewChat]: text, tool calls, images, and
// reasoning effort for reasoning models).
//
// # Ordering
//
// Deltas are reported in stream order, on the goroutine that called Stream;
// a delta's ContentIndex is the index of its block in the returned message.
//
// # Concurrency
//
// Providers hold no per-call state; concurrent Stream calls are safe.
//
// # Errors
//
// Every failure is one [*llm.Error]: 429 and 5xx are retryable (with
// retry-after-ms or Retry-After when sent), context_length_exceeded and the
// overflow wordings are context overflow, 401/403 auth, other 4xx invalid
// request; error events inside a stream (error, response.failed) by their
// code; a cut connection or a malformed event retryable; a cancelled ctx
// aborted. The SDK never retries: retries belong to Cairn's harness.
package openai
