// Package anthropic is Cairn's provider for Anthropic's Messages API, built on
// the official Go SDK: streamed text, thinking (its signature kept on the
// block for the next request, redacted thinking kept as a signature-only
// block), tool use with streamed JSON arguments, base64 images, prompt-cache
// breakpoints and cache usage, and every stop reason.
//
// # Ordering
//
// Deltas are reported in the order the stream delivers them, on the
// goroutine that called Stream; a delta's ContentIndex is the index of its
// block in the returned message.
//
// # Concurrency
//
// A [Provider] holds no per-call state; concurrent Stream calls are safe.
//
// # Errors
//
// Every failure is one [*llm.Error]: HTTP statuses and mid-stream error
// events by status and error type (429, 5xx, 529 overloaded_error and
// api_error are retryable, with Retry-After when sent), "prompt is too long"
// and 413 request_too_large as context overflow, 401/403 as auth, other 4xx
// as invalid request; a cut connection, a malformed event or a stream that
// ends before message_stop as retryable; a cancelled ctx as aborted. The SDK
// never retries: retries belong to Cairn's harness.
package anthropic
