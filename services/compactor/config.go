package compactor

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// Models resolves the provider/model reference of a request;
// registry.Registry is one.
type Models interface {
	Resolve(ref string) (llm.Provider, llm.Model, error)
}

// Config configures a [Compactor]. Zero values mean the defaults given.
type Config struct {
	// NATSURL is the server to connect to; default nats://127.0.0.1:4222.
	NATSURL string
	// NATSOptions are more options of the connection: credentials (the
	// service's own NATS user), TLS; default none.
	NATSOptions []nats.Option
	// Prefix namespaces streams and subjects; default "cairn".
	Prefix string
	// Models resolves the model of each request. Required.
	Models Models
	// Concurrency bounds the summaries written at once; default 4.
	Concurrency int
	// AckWait is the shared consumer's AckWait; default 30s. Every
	// compactor should agree on it.
	AckWait time.Duration
	// MaxDeliveries: a request delivered this often gets an error result
	// instead of another try; default 5.
	MaxDeliveries int
	// ShutdownTimeout is how long running summaries may finish on shutdown;
	// default 30s.
	ShutdownTimeout time.Duration
	// Name identifies the worker in results and logs; default host-pid.
	Name string
	// Replicas of the stream it creates if missing; default 1.
	Replicas int
	// HTTPAddr serves /healthz, /readyz and /metrics; default none.
	HTTPAddr string
	// Registry receives the compactor's metrics (cairn_compactor_*);
	// default a new registry (served on HTTPAddr).
	Registry *prometheus.Registry
	// Logger; default discards.
	Logger *slog.Logger
}

func fieldErr(field, format string, args ...any) error {
	return &events.FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Validate reports the first field that is wrong, naming it.
func (c Config) Validate() error {
	if c.Models == nil {
		return errors.New("compactor: Models is required")
	}
	if c.Prefix != "" {
		if err := events.ValidatePrefix(c.Prefix); err != nil {
			return err
		}
	}
	switch {
	case c.Concurrency < 0 || c.Concurrency > 1000:
		return fieldErr("concurrency", "must be 1-1000, got %d", c.Concurrency)
	case c.AckWait != 0 && c.AckWait < 100*time.Millisecond:
		return fieldErr("ackWait", "must be at least 100ms, got %s", c.AckWait)
	case c.MaxDeliveries < 0:
		return fieldErr("maxDeliveries", "must not be negative, got %d", c.MaxDeliveries)
	case c.ShutdownTimeout < 0:
		return fieldErr("shutdownTimeout", "must not be negative, got %s", c.ShutdownTimeout)
	case c.Replicas < 0 || c.Replicas > 5:
		return fieldErr("replicas", "must be 1-5, got %d", c.Replicas)
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.NATSURL == "" {
		c.NATSURL = "nats://127.0.0.1:4222"
	}
	if c.Concurrency == 0 {
		c.Concurrency = 4
	}
	if c.AckWait == 0 {
		c.AckWait = 30 * time.Second
	}
	if c.MaxDeliveries == 0 {
		c.MaxDeliveries = 5
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 30 * time.Second
	}
	if c.Name == "" {
		host, _ := os.Hostname()
		c.Name = host + "-" + strconv.Itoa(os.Getpid())
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
}
