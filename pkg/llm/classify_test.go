package llm

import "testing"

// TestClassify is the table of what each provider error means: the status
// rules, and the text rules the pi harness applies on top of them.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		status    int
		code, msg string
		want      Kind
	}{
		// status rules
		{401, "", "invalid x-api-key", KindAuth},
		{403, "permission_error", "not allowed", KindAuth},
		{408, "", "request timeout", KindRetryable},
		{409, "", "conflict", KindRetryable},
		{429, "rate_limit_error", "slow down", KindRetryable},
		{500, "api_error", "boom", KindRetryable},
		{529, "overloaded_error", "Overloaded", KindRetryable},
		{400, "invalid_request_error", "messages: roles must alternate", KindInvalidRequest},
		{404, "", "model not found", KindInvalidRequest},
		{0, "", "something odd", KindOther},

		// context overflow, by status, code or wording, whatever the status class
		{413, "", "", KindContextOverflow},
		{400, "context_length_exceeded", "anything", KindContextOverflow},
		{400, "", "prompt is too long: 213462 tokens > 200000 maximum", KindContextOverflow},
		{400, "", "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", KindContextOverflow},
		{400, "", "the request exceeds the available context size, try increasing it", KindContextOverflow},
		{400, "", "Your input exceeds the context window of this model.", KindContextOverflow},
		{500, "", "prompt too long; exceeded max context length by 100 tokens", KindContextOverflow},
		{400, "", "Input token count (300000) exceeds the maximum number of tokens allowed (200000)", KindContextOverflow},
		{400, "", "prompt token count of 130000 exceeds the limit of 128000", KindContextOverflow},
		{400, "", "400 status code (no body)", KindContextOverflow},
		{0, "", "model_context_window_exceeded", KindContextOverflow},

		// throttling is never an overflow, even when it speaks of tokens
		{400, "", "Throttling error: Too many tokens, please wait before trying again.", KindRetryable},
		{429, "", "Too many tokens per minute", KindRetryable},
		{429, "rate_limit_exceeded", "Rate limit reached: tokens per min", KindRetryable},
		{400, "", "Service unavailable: too many tokens in flight", KindRetryable},
		{0, "", "Rate limit exceeded: context length exceeded for this tier", KindRetryable},

		// an exhausted quota is not retried, even as a 429
		{429, "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.", KindQuota},
		{429, "", "insufficient_quota: You exceeded your current quota", KindQuota},
		{500, "", "Error: insufficient quota", KindQuota},
		{0, "", "You exceeded your current quota", KindQuota},
		{429, "insufficient_quota_temporary", "temporarily over the limit", KindRetryable},

		// network failures and "please retry" texts are retried, whatever the status
		{400, "", "Network connection lost.", KindRetryable},
		{0, "", "network_error: Network connection lost.", KindRetryable},
		{400, "network_error", "upstream failed", KindRetryable},
		{0, "", "read tcp 10.0.0.1:443: connection reset by peer", KindRetryable},
		{0, "", "ECONNRESET", KindRetryable},
		{0, "", "socket hang up", KindRetryable},
		{0, "", "fetch failed", KindRetryable},
		{0, "", "request timed out", KindRetryable},
		{400, "", "The server had an error while processing your request. Sorry about that! Please retry your request.", KindRetryable},
		{400, "", "An error occurred; you can retry your request", KindRetryable},
		{0, "", "The engine is currently overloaded, please try again later", KindRetryable},
		{0, "", "upstream answered 502", KindRetryable},
		{0, "", "max_tokens must be at most 512", KindOther},
		{0, "", "RESOURCE_EXHAUSTED", KindRetryable},

		// a number in a text with a status is not a status
		{400, "", "max_tokens: 500 is over this model's limit", KindInvalidRequest},
		{401, "", "connection reset while checking the key", KindAuth},
	} {
		if got := Classify(tc.status, tc.code, tc.msg); got != tc.want {
			t.Errorf("Classify(%d, %q, %q) = %v, want %v", tc.status, tc.code, tc.msg, got, tc.want)
		}
	}
}

func TestQuotaErrorsMatchTheirSentinel(t *testing.T) {
	e := &Error{Kind: KindQuota, Status: 429, Message: "insufficient_quota"}
	if e.Is(ErrRetryable) || !e.Is(ErrQuota) || e.Error() != "quota (status 429): insufficient_quota" {
		t.Fatalf("quota error: %v (retryable %v)", e, e.Is(ErrRetryable))
	}
}
