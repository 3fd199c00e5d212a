package llm

import (
	"regexp"
	"strings"
)

// Classify gives the kind of a provider's error: its HTTP status (0 when the
// error came without one, as text inside a stream or from a provider that
// does not classify), the provider's error code or type (may be empty) and
// its message. It is the one classifier: every provider, the scripted one
// included, calls it, so an error means the same whichever provider sent
// it. The rules follow the pi harness, first match wins:
//
//  1. Context overflow (compact, then retry): status 413, an overflow code
//     (context_length_exceeded...) or overflow wording ("prompt is too
//     long"...) — but never a throttling answer (status 429, or wording of
//     rate limits and throttling such as "Throttling error: Too many
//     tokens"), which only looks like one.
//  2. Quota (not retried): insufficient_quota, even when sent as a 429:
//     waiting does not bring an exhausted quota back.
//  3. Credentials: 401 and 403 are KindAuth.
//  4. Transient wording (retried, whatever the status says): overload, rate
//     limits, throttling, unavailable servers, network failures ("Network
//     connection lost.", connection resets, network_error, timeouts) and
//     explicit "please retry your request" texts. Without a status, a
//     retryable status in the text (429, 500, 502, 503, 504, 529) counts too.
//  5. The status class ([ClassifyStatus]): 408, 409, 425, 429 and 5xx
//     retryable, other 4xx invalid request, anything else KindOther.
//
// A failure to reach the provider at all (no response) is not an error
// response: providers classify it as retryable without calling Classify.
func Classify(status int, code, msg string) Kind {
	code = strings.ToLower(strings.TrimSpace(code))
	throttled := status == 429 || throttleText.MatchString(msg) || throttleText.MatchString(code)
	if !throttled && (status == 413 || overflowCodes[code] || overflowText.MatchString(msg)) {
		return KindContextOverflow
	}
	if quotaCodes[code] || quotaText.MatchString(msg) {
		return KindQuota
	}
	if status == 401 || status == 403 {
		return KindAuth
	}
	if throttled || transientText.MatchString(msg) || transientText.MatchString(code) ||
		(status == 0 && statusInText.MatchString(msg)) {
		return KindRetryable
	}
	return ClassifyStatus(status)
}

// overflowCodes are error codes or types that name a context overflow.
var overflowCodes = map[string]bool{
	"context_length_exceeded":        true, // OpenAI Chat Completions and Responses
	"model_context_window_exceeded":  true, // Anthropic stop reason, z.ai, some gateways
	"request_too_large":              true, // Anthropic 413
	"context_window_exceeded":        true,
	"input_tokens_exceed_max_tokens": true,
}

// overflowText matches the wording of context overflows across providers and
// servers, as each documents or has been seen to send them.
var overflowText = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`prompt is too long`,                                  // Anthropic
	`request_too_large`,                                   // Anthropic 413 in text
	`input is too long for requested model`,               // Anthropic on Bedrock
	`exceeds the context window`,                          // OpenAI Responses
	`maximum context length is \d+ tokens`,                // OpenAI Chat, OpenRouter, vLLM
	`reduce the length of the messages`,                   // OpenAI Chat, Groq
	`context[ _]length[ _]exceeded`,                       // OpenAI code in text, generic
	`context[ _]window[ _]exceeded`,                       // z.ai, generic
	`exceeds the available context size`,                  // llama.cpp server
	`the request exceeds the available context`,           // llama.cpp server
	`input token count.*exceeds the maximum`,              // Gemini
	`maximum prompt length is \d+`,                        // xAI
	`exceeds the limit of \d+`,                            // GitHub Copilot
	`greater than the context length`,                     // LM Studio
	`exceeds (?:the )?(?:model'?s? )?context length`,      // Ollama, vLLM
	`too large for model with \d+ maximum context length`, // Mistral
	`context window exceeds limit`,                        // MiniMax
	`exceeded model token limit`,                          // Kimi
	`prompt too long`,                                     // Ollama
	`requested \d+ tokens.*context`,                       // vLLM ("...exceeds the maximum context")
	`too many tokens`,                                     // generic
	`token limit exceeded`,                                // generic
	`context overflow`,                                    // generic
	`^4(?:00|13)\s*(?:status code)?\s*\(no body\)`,        // Cerebras: a 400 or 413 without a body
}, "|"))

// throttleText is the wording of throttling and rate limits: never an
// overflow, whatever else the text says, and always worth a retry.
var throttleText = regexp.MustCompile(`(?i)throttl|rate[ _-]?limit|too many requests|^service unavailable:`)

// quotaCodes and quotaText name an exhausted quota. insufficient_quota_temporary
// (a temporary limit) is not one: \b does not end a word before "_".
var (
	quotaCodes = map[string]bool{"insufficient_quota": true}
	quotaText  = regexp.MustCompile(`(?i)\binsufficient[ _]quota\b|exceeded your current quota`)
)

// transientText is the wording of failures that pass: overload, unavailable
// or failing servers, network failures, timeouts, and providers that say
// to retry.
var transientText = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`overloaded`,
	`service[ _]unavailable`, `temporarily unavailable`, `bad gateway`, `gateway timeout`,
	`server[ _]error`, `internal[ _]error`, `provider returned error`, `upstream connect`,
	`network[ _]error`, `network connection`, `connection (?:lost|reset|refused|closed|error)`, `econnreset`,
	`socket hang up`, `fetch failed`, `other side closed`, `reset before headers`,
	`http2 request did not get a response`, `ended without`, `stream ended before`,
	`timed? ?out`,
	`resource[ _]?exhausted`,
	`(?:please )?retry your request`, `try your request again`, `try again later`,
}, "|"))

// statusInText is a retryable status in a text that came without one
// ("upstream answered 502").
var statusInText = regexp.MustCompile(`\b(?:429|500|502|503|504|529)\b`)
