package registry

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/anthropic"
	"github.com/cairn-agents/cairn/pkg/provider/models"
	"github.com/cairn-agents/cairn/pkg/provider/openai"
	"github.com/cairn-agents/cairn/pkg/provider/openaicompat"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// Sentinel errors.
var (
	ErrBadRef          = errors.New("bad model reference")
	ErrUnknownProvider = errors.New("unknown provider")
)

// Environment variables the registry reads.
const (
	EnvAnthropicKey     = "ANTHROPIC_API_KEY"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
	EnvOpenAIKey        = "OPENAI_API_KEY"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	// EnvCompatibleBaseURL and EnvCompatibleKey define an endpoint named
	// openai-compatible without a configuration file.
	EnvCompatibleBaseURL = "OPENAI_COMPATIBLE_BASE_URL"
	EnvCompatibleKey     = "OPENAI_COMPATIBLE_API_KEY"
)

// Constructor builds the provider and describes the model for one model id
// of a registered provider (scripted/<id> calls it with id).
type Constructor func(id string) (llm.Provider, llm.Model, error)

// Config configures a Registry. The zero value uses the embedded model
// registry, the process environment and no compatible endpoints.
type Config struct {
	Models    *models.Registry // nil: models.Builtin()
	Endpoints []Endpoint       // OpenAI-compatible endpoints
	// Getenv reads the environment; nil is os.Getenv. Tests pass a map.
	Getenv     func(string) string
	HTTPClient *http.Client // nil: no timeout (ctx bounds each call)
	Logger     *slog.Logger // passed to the providers; nil discards
}

// Registry resolves provider/model references.
type Registry struct {
	cfg       Config
	endpoints map[string]Endpoint
	mu        struct {
		sync.Mutex
		extra     map[string]Constructor
		providers map[string]llm.Provider // by provider name and API
	}
}

// New validates cfg and returns a registry.
func New(cfg Config) (*Registry, error) {
	if cfg.Models == nil {
		cfg.Models = models.Builtin()
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Registry{cfg: cfg, endpoints: map[string]Endpoint{}}
	r.mu.extra = map[string]Constructor{}
	r.mu.providers = map[string]llm.Provider{}
	eps := cfg.Endpoints
	if base := cfg.Getenv(EnvCompatibleBaseURL); base != "" && !slices.ContainsFunc(eps, func(e Endpoint) bool { return e.Name == "openai-compatible" }) {
		e := Endpoint{Name: "openai-compatible", BaseURL: base}
		if cfg.Getenv(EnvCompatibleKey) != "" { // optional: local servers take none
			e.KeyEnv = EnvCompatibleKey
		}
		eps = append(slices.Clone(eps), e)
	}
	for i, e := range eps {
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("endpoints[%d]: %w", i, err)
		}
		if _, dup := r.endpoints[e.Name]; dup {
			return nil, fmt.Errorf("endpoints[%d]: endpoint %q is defined twice", i, e.Name)
		}
		r.endpoints[e.Name] = e
	}
	return r, nil
}

// Register adds a provider by name (e.g. scripted). Built-in names and
// endpoint names cannot be taken.
func (r *Registry) Register(name string, c Constructor) error {
	if err := checkName(name); err != nil {
		return err
	}
	if name == "anthropic" || name == "openai" {
		return fmt.Errorf("provider %q is built in and cannot be registered again", name)
	}
	if _, ok := r.endpoints[name]; ok {
		return fmt.Errorf("provider %q is already a configured endpoint", name)
	}
	if c == nil {
		return fmt.Errorf("provider %q: nil constructor", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.mu.extra[name]; dup {
		return fmt.Errorf("provider %q is already registered", name)
	}
	r.mu.extra[name] = c
	return nil
}

// ParseRef splits a provider/model reference. The model part may contain
// slashes and colons (openrouter/meta-llama/llama-3.1-8b, ollama/qwen3:8b).
func ParseRef(ref string) (provider, id string, err error) {
	provider, id, ok := strings.Cut(ref, "/")
	if !ok || provider == "" || id == "" || strings.TrimSpace(ref) != ref {
		return "", "", fmt.Errorf("%w %q: want provider/model, e.g. anthropic/claude-sonnet-4-5", ErrBadRef, ref)
	}
	return provider, id, nil
}

// Resolve returns the provider and the model that ref names.
func (r *Registry) Resolve(ref string) (llm.Provider, llm.Model, error) {
	name, id, err := ParseRef(ref)
	if err != nil {
		return nil, llm.Model{}, err
	}
	switch name {
	case "anthropic":
		m, err := r.cfg.Models.Lookup(name, id)
		if err != nil {
			return nil, llm.Model{}, err
		}
		p, err := r.provider("anthropic", r.anthropic)
		return p, m, err
	case "openai":
		m, err := r.cfg.Models.Lookup(name, id)
		if err != nil {
			return nil, llm.Model{}, err
		}
		if m.API == models.APIOpenAICompletions {
			p, err := r.provider("openai/chat", func() (llm.Provider, error) { return openai.NewChat(r.openaiConfig()) })
			return p, m, err
		}
		p, err := r.provider("openai/responses", func() (llm.Provider, error) { return openai.NewResponses(r.openaiConfig()) })
		return p, m, err
	}
	if e, ok := r.endpoints[name]; ok {
		m, err := r.cfg.Models.Lookup(name, id)
		if err != nil {
			m = models.Compatible(name, id, e.BaseURL, e.ContextWindow, e.MaxOutput)
		}
		m.BaseURL = e.BaseURL
		p, err := r.provider("endpoint/"+name, func() (llm.Provider, error) { return r.compatible(e) })
		return p, m, err
	}
	r.mu.Lock()
	c, ok := r.mu.extra[name]
	r.mu.Unlock()
	if ok {
		p, m, err := c(id)
		if err != nil {
			return nil, llm.Model{}, fmt.Errorf("%s/%s: %w", name, id, err)
		}
		return p, m, nil
	}
	return nil, llm.Model{}, fmt.Errorf("%w %q in %q (known: %s)", ErrUnknownProvider, name, ref, strings.Join(r.Providers(), ", "))
}

// Providers lists the provider names the registry resolves.
func (r *Registry) Providers() []string {
	names := []string{"anthropic", "openai"}
	for n := range r.endpoints {
		names = append(names, n)
	}
	r.mu.Lock()
	for n := range r.mu.extra {
		names = append(names, n)
	}
	r.mu.Unlock()
	slices.Sort(names)
	return names
}

// provider returns the cached provider under key, building it on first use.
// A failed build is not cached: setting the key later works.
func (r *Registry) provider(key string, build func() (llm.Provider, error)) (llm.Provider, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.mu.providers[key]; ok {
		return p, nil
	}
	p, err := build()
	if err != nil {
		return nil, err
	}
	r.mu.providers[key] = p
	return p, nil
}

func (r *Registry) key(env, provider string) (secret.Secret, error) {
	k := secret.Secret(strings.TrimSpace(r.cfg.Getenv(env)))
	if k.IsZero() {
		return "", &llm.Error{Kind: llm.KindAuth, Message: fmt.Sprintf("%s: no API key: set %s in the environment", provider, env)}
	}
	return k, nil
}

func (r *Registry) anthropic() (llm.Provider, error) {
	k, err := r.key(EnvAnthropicKey, "anthropic")
	if err != nil {
		return nil, err
	}
	return anthropic.New(anthropic.Config{APIKey: k, BaseURL: r.cfg.Getenv(EnvAnthropicBaseURL), HTTPClient: r.cfg.HTTPClient, Logger: r.cfg.Logger})
}

func (r *Registry) openaiConfig() openai.Config {
	k, _ := r.key(EnvOpenAIKey, "openai") // a missing key is reported by the constructor
	return openai.Config{APIKey: k, BaseURL: r.cfg.Getenv(EnvOpenAIBaseURL), HTTPClient: r.cfg.HTTPClient, Logger: r.cfg.Logger}
}

func (r *Registry) compatible(e Endpoint) (llm.Provider, error) {
	var k secret.Secret
	if e.KeyEnv != "" {
		var err error
		if k, err = r.key(e.KeyEnv, e.Name); err != nil {
			return nil, err
		}
	}
	return openaicompat.New(openaicompat.Config{Name: e.Name, BaseURL: e.BaseURL, APIKey: k, HTTPClient: r.cfg.HTTPClient, Logger: r.cfg.Logger})
}

// LoadConfig reads the operator's files into a Config: the model registry
// file over the embedded one and the endpoints file; either path may be ""
// (none). cairn's commands pass their --models and --endpoints flags here.
func LoadConfig(modelsPath, endpointsPath string) (Config, error) {
	var cfg Config
	m, err := models.Load(modelsPath)
	if err != nil {
		return cfg, err
	}
	cfg.Models = m
	if endpointsPath != "" {
		if cfg.Endpoints, err = LoadEndpoints(endpointsPath); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}
