package mcptool

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// Prefix starts the name of every MCP tool: mcp__<server>__<tool>.
const Prefix = "mcp__"

// Defaults of [Server]'s time-outs.
const (
	DefaultCallTimeout  = 60 * time.Second
	DefaultStartTimeout = 20 * time.Second
	// MaxResultBytes bounds the text of one result; more is cut with a note.
	MaxResultBytes = 256 << 10
)

// Server configures one MCP server.
type Server struct {
	// Name is 1-32 characters of a-z A-Z 0-9 and -; it names the tools.
	Name string
	// Command (stdio) or URL (streamable HTTP): exactly one.
	Command []string
	URL     string
	// Env is added to a stdio server's environment, which is otherwise the
	// toolrunner's ("KEY=value" entries).
	Env []string
	// Headers are sent with every HTTP request (e.g. Authorization); their
	// values are secrets: never logged.
	Headers map[string]secret.Secret
	// Idempotent is the effect class of every tool of the server; default
	// false (a call interrupted by a crash is not run again).
	Idempotent bool
	// CallTimeout bounds one call; default DefaultCallTimeout.
	CallTimeout time.Duration
	// StartTimeout bounds connecting and listing the tools; default
	// DefaultStartTimeout.
	StartTimeout time.Duration
}

// Validate reports the first problem of s, naming the field.
func (s Server) Validate() error {
	if err := ValidateServerName(s.Name); err != nil {
		return err
	}
	switch {
	case len(s.Command) == 0 && s.URL == "":
		return fmt.Errorf("mcp server %q: a command or a URL is required", s.Name)
	case len(s.Command) > 0 && s.URL != "":
		return fmt.Errorf("mcp server %q: a command or a URL, not both", s.Name)
	case len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "":
		return fmt.Errorf("mcp server %q: the command is empty", s.Name)
	case len(s.Command) > 0 && len(s.Headers) > 0:
		return fmt.Errorf("mcp server %q: headers are for HTTP servers only", s.Name)
	case s.URL != "" && len(s.Env) > 0:
		return fmt.Errorf("mcp server %q: an environment is for stdio servers only", s.Name)
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mcp server %q: URL %q is not an http(s) URL", s.Name, redactURL(s.URL))
		}
	}
	for k, v := range s.Headers {
		if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r == ':' || r > unicode.MaxASCII }) {
			return fmt.Errorf("mcp server %q: header name %q is not a valid HTTP header name", s.Name, k)
		}
		if strings.ContainsAny(string(v), "\r\n") {
			return fmt.Errorf("mcp server %q: header %s: the value has a line break", s.Name, k)
		}
	}
	if s.CallTimeout < 0 || s.StartTimeout < 0 {
		return fmt.Errorf("mcp server %q: time-outs must not be negative", s.Name)
	}
	return nil
}

func (s Server) withDefaults() Server {
	if s.CallTimeout == 0 {
		s.CallTimeout = DefaultCallTimeout
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = DefaultStartTimeout
	}
	return s
}

// ValidateServerName checks a server's name: 1-32 characters of a-z A-Z
// 0-9 and - (no _, so mcp__<server>__<tool> splits one way only).
func ValidateServerName(name string) error {
	if name == "" || len(name) > 32 || strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
	}) {
		return fmt.Errorf("mcp server name %q: 1-32 characters of a-z A-Z 0-9 - expected", name)
	}
	return nil
}

// ToolName is the Cairn name of tool of server, or an error saying why the
// MCP tool's name cannot be one.
func ToolName(server, tool string) (string, error) {
	name := Prefix + server + "__" + tool
	if err := events.ValidateToolName("name", name); err != nil {
		return "", fmt.Errorf("mcp server %q: tool %q: %s is not a valid tool name (1-64 characters of A-Z a-z 0-9 _ -)", server, tool, name)
	}
	return name, nil
}

// redactURL drops the user information and query of a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}
