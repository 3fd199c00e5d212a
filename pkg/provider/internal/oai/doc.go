// Package oai implements OpenAI's two streaming APIs on the official SDK:
// Chat Completions ([Chat], also used for OpenAI-compatible servers) and
// Responses ([Responses]). Packages openai and openaicompat expose them.
//
// # Ordering
//
// Deltas are reported in stream order, on the goroutine that called Stream.
//
// # Concurrency
//
// Providers hold no per-call state; concurrent Stream calls are safe.
//
// # Errors
//
// Every failure is one [*llm.Error]. Error responses are read by a
// middleware that keeps the status, headers and body whatever their shape
// (compatible servers answer with bodies the SDK cannot parse), then
// classified by status, error code and wording; errors inside a stream by
// their code and wording (server errors by default, which are retryable).
package oai
