package stream

import (
	"regexp"
	"strings"
)

// overflowCodes are error codes or types that name a context overflow.
var overflowCodes = map[string]bool{
	"context_length_exceeded":        true, // OpenAI Chat Completions and Responses
	"model_context_window_exceeded":  true, // Anthropic stop reason, some gateways
	"request_too_large":              true, // Anthropic 413
	"context_window_exceeded":        true,
	"input_tokens_exceed_max_tokens": true,
}

// overflowText matches the wording of context overflows across providers and
// servers, as each documents or has been seen to send them.
var overflowText = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`prompt is too long`,                                  // Anthropic
	`input is too long for requested model`,               // Anthropic on Bedrock
	`exceeds the context window`,                          // OpenAI Responses
	`maximum context length is \d+ tokens`,                // OpenAI Chat, vLLM
	`reduce the length of the messages`,                   // OpenAI Chat
	`context[ _]length[ _]exceeded`,                       // OpenAI code in text, OpenRouter
	`exceeds the available context size`,                  // llama.cpp server
	`the request exceeds the available context`,           // llama.cpp server
	`input token count.*exceeds the maximum`,              // Gemini via OpenAI-compatible gateways
	`maximum prompt length is \d+`,                        // xAI
	`greater than the context length`,                     // LM Studio
	`exceeds (?:the )?(?:model'?s? )?context length`,      // Ollama, vLLM
	`too large for model with \d+ maximum context length`, // Mistral
	`context window exceeds limit`,                        // MiniMax
	`exceeded model token limit`,                          // Kimi
	`prompt too long`,                                     // Ollama
	`requested \d+ tokens.*context`,                       // vLLM ("...exceeds the maximum context")
}, "|"))

// IsOverflow reports whether an error response says the context does not fit
// the model's window. A 413 counts: the request is too large to be taken.
func IsOverflow(status int, code, msg string) bool {
	if status == 413 {
		return true
	}
	if overflowCodes[code] {
		return true
	}
	return overflowText.MatchString(msg)
}
