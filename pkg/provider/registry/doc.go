// Package registry selects a model provider by a provider/model reference
// (anthropic/claude-sonnet-4-5, openai/gpt-5, ollama/qwen3:8b,
// scripted/demo), as configuration and set_model commands name them.
//
// Built in: anthropic and openai, whose models come from the model registry
// (package models; the model's api picks OpenAI's Responses or Chat
// Completions API), and the OpenAI-compatible endpoints of the
// configuration, each with a name, a base URL and the name of the
// environment variable holding its key. Other providers (the scripted one)
// are added with [Registry.Register] by whoever builds the process, so this
// package does not depend on them.
//
// Keys come only from the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY and
// each endpoint's variable. ANTHROPIC_BASE_URL and OPENAI_BASE_URL override
// the base URLs (gateways, proxies). Keys are held as [secret.Secret], which
// never prints, logs or marshals its value.
//
// # Concurrency
//
// A Registry is safe for concurrent use. Providers are built on first use
// and reused; a provider whose key is missing fails at that first use, with
// an auth error naming the variable, so a process that never uses OpenAI
// does not need its key.
//
// # Errors
//
// A bad reference fails with [ErrBadRef], an unknown provider with
// [ErrUnknownProvider] listing the known ones, an unknown model with
// models.ErrUnknownModel, a missing key with an *llm.Error of kind auth.
package registry
