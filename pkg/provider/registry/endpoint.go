package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
)

// Endpoint is an OpenAI-compatible server: ollama/<model> resolves to the
// endpoint named ollama.
type Endpoint struct {
	Name    string `json:"name"`    // the provider name in references
	BaseURL string `json:"baseUrl"` // e.g. http://localhost:11434/v1
	// KeyEnv names the environment variable that holds the key; empty for
	// servers without auth. The key itself is never configured in a file.
	KeyEnv string `json:"keyEnv,omitempty"`
	// ContextWindow and MaxOutput describe the endpoint's models that the
	// model registry does not list (defaults: models.Compatible's).
	ContextWindow int64 `json:"contextWindow,omitempty"`
	MaxOutput     int64 `json:"maxOutput,omitempty"`
}

var (
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	envRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func checkName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("provider name %q: want lower-case letters, digits, '.', '_' or '-'", name)
	}
	return nil
}

func (e Endpoint) validate() error {
	if err := checkName(e.Name); err != nil {
		return err
	}
	if e.Name == "anthropic" || e.Name == "openai" {
		return fmt.Errorf("endpoint name %q is a built-in provider", e.Name)
	}
	u, err := url.Parse(e.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %s: baseUrl %q: want an http or https URL such as http://localhost:11434/v1", e.Name, e.BaseURL)
	}
	if e.KeyEnv != "" && !envRE.MatchString(e.KeyEnv) {
		return fmt.Errorf("endpoint %s: keyEnv %q: want the name of an environment variable (the key itself never goes in configuration)", e.Name, e.KeyEnv)
	}
	if e.ContextWindow < 0 || e.MaxOutput < 0 {
		return fmt.Errorf("endpoint %s: contextWindow %d, maxOutput %d: cannot be negative", e.Name, e.ContextWindow, e.MaxOutput)
	}
	return nil
}

// LoadEndpoints reads a JSON file {"endpoints": [Endpoint...]}.
func LoadEndpoints(path string) ([]Endpoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("endpoints: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f struct {
		Endpoints []Endpoint `json:"endpoints"`
	}
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("endpoints %s: %w", path, err)
	}
	for i, e := range f.Endpoints {
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("endpoints %s: endpoints[%d]: %w", path, i, err)
		}
	}
	return f.Endpoints, nil
}
