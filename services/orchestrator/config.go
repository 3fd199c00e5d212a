package orchestrator

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures an Orchestrator. Zero values mean the defaults given.
type Config struct {
	// Conn is the NATS connection. Required.
	Conn *nats.Conn
	// Log is the session log (JetStream in production). Required.
	Log session.Log
	// Names of streams and subjects; default prefix "cairn".
	Names events.Names
	// Instance names this process among orchestrators; default host-pid.
	Instance string
	// Partitions must equal the partition count CAIRN_COMMANDS was
	// provisioned with; default provision.DefaultPartitions.
	Partitions int
	// LeaseTTL is how long a dead instance keeps its partitions; default 5s.
	LeaseTTL time.Duration
	// IdleTimeout is how long an idle session stays in memory; default 5m.
	IdleTimeout time.Duration
	// ShrinkAfter is how long a settled session keeps its decoded entries
	// and its harness before it shrinks to its stored records, to be
	// decoded again at its next command; default 1s, negative = never.
	ShrinkAfter time.Duration

	// Models resolves provider/model references (the provider registry).
	// DefaultModel is the model of sessions created without one. Required.
	Models       Models
	DefaultModel string
	// SystemPrompt is the base prompt of sessions created without one whose
	// tenant has no base of its own (resources.SystemBase).
	SystemPrompt string
	// WorkspaceRoot is the root of session workspaces, as the toolrunners
	// have it (--workspace-root): a create's workspace must lie inside it
	// (pkg/workspace), and its session entry records it relative to the
	// root. Empty: only relative workspaces are accepted, and an absolute
	// one is refused, since it cannot be checked.
	WorkspaceRoot string

	// NoExtensions turns extensions off: the extensions bucket is not
	// watched, no remote hook is called and no lifecycle notice sent.
	// Default false (extensions on, docs/extensions.md).
	NoExtensions bool

	// Registerer receives the orchestrator's metrics; default a new registry.
	Registerer prometheus.Registerer
	// Logger; default discards.
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.Instance == "" {
		host, _ := os.Hostname()
		c.Instance = fmt.Sprintf("%s-%d", sanitizeToken(host), os.Getpid())
	}
	if c.Partitions == 0 {
		c.Partitions = provision.DefaultPartitions
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 5 * time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.ShrinkAfter == 0 {
		c.ShrinkAfter = time.Second
	}
	if c.Registerer == nil {
		c.Registerer = prometheus.NewRegistry()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports the first problem of c.
func (c *Config) Validate() error {
	switch {
	case c.Conn == nil:
		return errors.New("orchestrator: Conn is required")
	case c.Log == nil:
		return errors.New("orchestrator: Log is required")
	case c.Models == nil:
		return errors.New("orchestrator: Models is required")
	case c.Partitions < 0 || c.Partitions > 4096:
		return fmt.Errorf("orchestrator: Partitions must be 1-4096, got %d", c.Partitions)
	case c.LeaseTTL < 0 || c.IdleTimeout < 0:
		return errors.New("orchestrator: durations must not be negative")
	}
	if err := events.ValidateModelRef("DefaultModel", c.DefaultModel); err != nil {
		return fmt.Errorf("orchestrator: %w", err)
	}
	if _, _, err := c.Models.Resolve(c.DefaultModel); err != nil {
		return fmt.Errorf("orchestrator: DefaultModel: %w", err)
	}
	if c.Instance != "" && strings.ContainsAny(c.Instance, ". *>") {
		return fmt.Errorf("orchestrator: Instance %q must not contain '.', '*', '>' or spaces", c.Instance)
	}
	return nil
}

// Models resolves provider/model references; registry.Registry is one.
type Models interface {
	Resolve(ref string) (llm.Provider, llm.Model, error)
	Providers() []string
}

func sanitizeToken(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '*' || r == '>' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}
