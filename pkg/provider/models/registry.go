package models

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/cairn-agents/cairn/pkg/llm"
)

//go:embed models.json
var builtin []byte

// ErrUnknownModel is matched by the error of a lookup that finds nothing.
var ErrUnknownModel = errors.New("unknown model")

// API names, as [llm.Model.API] carries them.
const (
	APIAnthropicMessages = "anthropic-messages"
	APIOpenAIResponses   = "openai-responses"
	APIOpenAICompletions = "openai-completions"
)

// Registry maps provider/model references to models.
type Registry struct {
	byRef map[string]llm.Model
}

type file struct {
	Comment string      `json:"_comment,omitempty"`
	Models  []llm.Model `json:"models"`
}

// Builtin returns the registry embedded in the binary.
func Builtin() *Registry {
	r, err := Parse("models.json (embedded)", builtin)
	if err != nil {
		// The embedded file is tested; a broken one is a build defect.
		panic(err)
	}
	return r
}

// Load returns the embedded registry with the operator file at path applied
// over it; path "" means no operator file.
func Load(path string) (*Registry, error) {
	r := Builtin()
	if path == "" {
		return r, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model registry: %w", err)
	}
	over, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	return r.With(over), nil
}

// Parse reads a registry file; name is used in errors.
func Parse(name string, data []byte) (*Registry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("model registry %s: %w", name, err)
	}
	r := &Registry{byRef: make(map[string]llm.Model, len(f.Models))}
	for i, m := range f.Models {
		if err := validate(m); err != nil {
			return nil, fmt.Errorf("model registry %s: models[%d]: %w", name, i, err)
		}
		if _, dup := r.byRef[m.Ref()]; dup {
			return nil, fmt.Errorf("model registry %s: models[%d]: %s is listed twice", name, i, m.Ref())
		}
		r.byRef[m.Ref()] = m
	}
	return r, nil
}

func validate(m llm.Model) error {
	switch {
	case m.Provider == "" || strings.Contains(m.Provider, "/"):
		return fmt.Errorf("provider %q: want a non-empty name without '/'", m.Provider)
	case m.ID == "":
		return fmt.Errorf("%s: id is required", m.Provider)
	case m.ContextWindow <= 0:
		return fmt.Errorf("%s: contextWindow %d: want a positive token count", m.Ref(), m.ContextWindow)
	case m.MaxOutput <= 0 || m.MaxOutput > m.ContextWindow:
		return fmt.Errorf("%s: maxOutput %d: want a positive token count no larger than contextWindow %d", m.Ref(), m.MaxOutput, m.ContextWindow)
	case m.Price.Input < 0 || m.Price.Output < 0 || m.Price.CacheRead < 0 || m.Price.CacheWrite < 0:
		return fmt.Errorf("%s: price %+v: prices cannot be negative", m.Ref(), m.Price)
	}
	switch m.API {
	case "", APIAnthropicMessages, APIOpenAIResponses, APIOpenAICompletions:
	default:
		return fmt.Errorf("%s: api %q: want %s, %s or %s", m.Ref(), m.API, APIAnthropicMessages, APIOpenAIResponses, APIOpenAICompletions)
	}
	return nil
}

// With returns a registry holding r's models with over's applied on top.
func (r *Registry) With(over *Registry) *Registry {
	out := &Registry{byRef: make(map[string]llm.Model, len(r.byRef)+len(over.byRef))}
	for k, m := range r.byRef {
		out.byRef[k] = m
	}
	for k, m := range over.byRef {
		out.byRef[k] = m
	}
	return out
}

// Lookup returns the model of provider with id.
func (r *Registry) Lookup(provider, id string) (llm.Model, error) {
	if m, ok := r.byRef[provider+"/"+id]; ok {
		return m, nil
	}
	var known []string
	for _, m := range r.byRef {
		if m.Provider == provider {
			known = append(known, m.ID)
		}
	}
	if len(known) == 0 {
		return llm.Model{}, fmt.Errorf("%w %s/%s: the registry has no models of provider %q (add them in the operator's models file)", ErrUnknownModel, provider, id, provider)
	}
	slices.Sort(known)
	return llm.Model{}, fmt.Errorf("%w %s/%s (known %s models: %s; add others in the operator's models file)", ErrUnknownModel, provider, id, provider, strings.Join(known, ", "))
}

// Models returns every model, sorted by reference.
func (r *Registry) Models() []llm.Model {
	out := make([]llm.Model, 0, len(r.byRef))
	for _, m := range r.byRef {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b llm.Model) int { return strings.Compare(a.Ref(), b.Ref()) })
	return out
}

// Compatible defaults, for OpenAI-compatible models no file describes.
const (
	CompatibleContextWindow = 32768
	CompatibleMaxOutput     = 8192
)

// Compatible returns the model of an OpenAI-compatible endpoint that the
// registry does not list: a 32k window, 8k output, no price (self-hosted
// models cost nothing per token; a priced gateway needs a registry entry),
// text only. contextWindow and maxOutput override the defaults when > 0.
func Compatible(provider, id, baseURL string, contextWindow, maxOutput int64) llm.Model {
	m := llm.Model{Provider: provider, ID: id, API: APIOpenAICompletions, BaseURL: baseURL,
		ContextWindow: CompatibleContextWindow, MaxOutput: CompatibleMaxOutput}
	if contextWindow > 0 {
		m.ContextWindow = contextWindow
	}
	if maxOutput > 0 {
		m.MaxOutput = maxOutput
	}
	if m.MaxOutput > m.ContextWindow {
		m.MaxOutput = m.ContextWindow
	}
	return m
}
