package projector

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a projector. The zero value of every field but JetStream
// and Dir means its default.
type Config struct {
	// JetStream is the connection to the log. Required.
	JetStream jetstream.JetStream
	// Dir is the Pebble database directory. Required.
	Dir string
	// FS is the file system Pebble uses. Default: the disk.
	FS vfs.FS
	// Prefix namespaces stream and subject names (events.Names). Default "cairn".
	Prefix string
	// Durable is the consumer's durable name. Default "<prefix>-projector".
	Durable string
	// BatchSize is the most entries applied in one Pebble batch. Default
	// 256 for the live projector (a batch is what has arrived, so lag stays
	// low), DefaultRebuildBatchSize for Rebuild (which fills every batch).
	BatchSize int
	// MemTableSize is Pebble's memtable size. Default 64 MiB.
	MemTableSize uint64
	// Logger receives the projector's logs. Default: discarded.
	Logger *slog.Logger
	// Registry receives the projector's metrics. Default: a registry of its
	// own, served by OpsHandler.
	Registry *prometheus.Registry
	// OnCommit, if set, is called by the live projector (Run) after every
	// commit, on the goroutine that applies entries: it must return quickly.
	// For measuring lag (cairn bench).
	OnCommit func(Commit)

	// recordBatch, if set, receives every Pebble batch Rebuild commits
	// (store.Writer.SetRecorder): for the benchmark's same-writes baseline.
	recordBatch func(repr []byte)
	// onRebuildCommit, if set, is told of each batch an online rebuild
	// commits, on its goroutine; switchStep of each step of a switch-over
	// (online.go), on Run's. For tests that stop or crash them there.
	onRebuildCommit func(Commit)
	switchStep      func(step string)
	// onlineBatch is the batch size of online rebuilds; default
	// DefaultRebuildBatchSize.
	onlineBatch int
}

// Defaults.
const (
	DefaultBatchSize        = 256
	DefaultRebuildBatchSize = 10000
	MaxBatchSize            = 10000
)

// ErrConfig is matched by every configuration error.
var ErrConfig = errors.New("projector: invalid configuration")

// ConfigError names an invalid field of a Config. errors.Is(err, ErrConfig)
// holds for it.
type ConfigError struct {
	Field   string
	Problem string
}

func (e *ConfigError) Error() string { return "projector: config: " + e.Field + ": " + e.Problem }

// Is makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Validate reports the first invalid field, naming it. JetStream is checked
// last, so that a command line can be checked before connecting.
func (c *Config) Validate() error {
	if c.Dir == "" {
		return configErr("Dir", "is required (the Pebble database directory)")
	}
	if c.Prefix != "" {
		if err := events.ValidatePrefix(c.Prefix); err != nil {
			return configErr("Prefix", "%v", err)
		}
	}
	if strings.ContainsAny(c.Durable, ".*> \t\r\n/\\") {
		return configErr("Durable", "%q may not contain . * > / \\ or white space", c.Durable)
	}
	if c.BatchSize < 0 || c.BatchSize > MaxBatchSize {
		return configErr("BatchSize", "must be 0 (default %d) to %d, got %d", DefaultBatchSize, MaxBatchSize, c.BatchSize)
	}
	if c.MemTableSize != 0 && (c.MemTableSize < 1<<20 || c.MemTableSize >= 4<<30) {
		return configErr("MemTableSize", "must be 0 (default 64 MiB) or between 1 MiB and 4 GiB, got %d", c.MemTableSize)
	}
	if c.JetStream == nil {
		return configErr("JetStream", "is required")
	}
	return nil
}

// withDefaults returns c with defaults filled in.
func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = events.DefaultPrefix
	}
	if c.Durable == "" {
		c.Durable = events.Names{Prefix: c.Prefix}.ProjectorConsumer()
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	return c
}

func (c *Config) names() events.Names { return events.Names{Prefix: c.Prefix} }
