package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairn-agents/cairn/pkg/events"
	"log/slog"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/cairn-agents/cairn/pkg/extension"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/resources"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/lease"
	"github.com/nats-io/nats.go/jetstream"
)

// Orchestrator runs the agent loops of the sessions in the partitions it holds.
type Orchestrator struct {
	cfg         Config
	log         *slog.Logger
	js          jetstream.JetStream
	bus         *toolbus.Bus
	checkpoints jetstream.KeyValue
	outcomes    jetstream.KeyValue // outcomes without a log entry (outcomes.go)
	budget      *budget.Ledger     // tenants' budgets (budget.go)
	metrics     metrics
	providers   map[string]llm.Provider // every provider name → the resolver
	validator   tool.Validator          // shared by every session's harness
	resStore    *resources.Store        // skills and templates (resources.go)
	resCache    *resources.Cache        // their copy, for what runs per turn
	ext         *extension.Host         // remote hooks and notices; nil with NoExtensions (extensions.go)
	// leases is the lease manager, set before Run takes a partition; its
	// Holds fences the actors' appends (partition.writable).
	leases *lease.Manager
	// leaseClock is the leases' clock; nil is time.Now. Tests move it.
	leaseClock func() time.Time

	ctx context.Context // Run's context
	wg  sync.WaitGroup
	mu  struct {
		sync.Mutex
		partitions map[int]*partition
		stopping   map[int]*partition // released, not yet stopped
		actors     map[events.SessionRef]*actor
	}
}

// New checks cfg and builds an Orchestrator; Run starts it.
func New(cfg Config) (*Orchestrator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	// Live events go out with PublishAsync; a deep window keeps a burst of
	// thousands of sessions' events from stalling (and then dropping) them.
	js, err := jetstream.New(cfg.Conn, jetstream.WithPublishAsyncMaxPending(1<<16))
	if err != nil {
		return nil, fmt.Errorf("orchestrator: %w", err)
	}
	bus, err := toolbus.New(cfg.Conn, cfg.Names, toolbus.WithLogger(cfg.Logger))
	if err != nil {
		return nil, fmt.Errorf("orchestrator: %w", err)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: register metrics: %w", err)
	}
	o := &Orchestrator{cfg: cfg, log: cfg.Logger.With("instance", cfg.Instance), js: js, bus: bus, metrics: m}
	if !cfg.NoExtensions {
		o.ext, err = extension.NewHost(extension.HostConfig{Conn: cfg.Conn, Names: cfg.Names, Registerer: cfg.Registerer,
			Logger: o.log.With("part", "extensions")})
		if err != nil {
			return nil, fmt.Errorf("orchestrator: %w", err)
		}
	}
	o.providers = map[string]llm.Provider{}
	for _, name := range cfg.Models.Providers() {
		o.providers[name] = resolver{cfg.Models}
	}
	o.mu.partitions = map[int]*partition{}
	o.mu.stopping = map[int]*partition{}
	o.mu.actors = map[events.SessionRef]*actor{}
	return o, nil
}

// Run takes its share of the partitions and runs their sessions until ctx is
// cancelled. On the way out it stops every session (a running turn is
// aborted; recovery closes it if the abort cannot be recorded), saves the
// command checkpoints and releases its leases so others take over at once.
func (o *Orchestrator) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	o.ctx = ctx
	if err := toolbus.Check(ctx, o.js, o.cfg.Names); err != nil {
		return fmt.Errorf("orchestrator: %w (run cairn provision)", err)
	}
	if _, err := o.js.Stream(ctx, o.cfg.Names.CommandsStream()); err != nil {
		return fmt.Errorf("orchestrator: stream %s: %w (run cairn provision)", o.cfg.Names.CommandsStream(), err)
	}
	// Keep the replicas `cairn provision --replicas N` gave the bucket; only
	// its TTL follows this instance's lease TTL.
	replicas := 1
	if kv, err := o.js.KeyValue(ctx, o.cfg.Names.LeasesBucket()); err == nil {
		if st, err := kv.Status(ctx); err == nil {
			if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok {
				replicas = max(1, bs.StreamInfo().Config.Replicas)
			}
		}
	}
	leases, err := o.js.CreateOrUpdateKeyValue(ctx, provision.LeasesBucket(o.cfg.Names, replicas, o.cfg.LeaseTTL))
	if err != nil {
		return fmt.Errorf("orchestrator: leases bucket: %w", err)
	}
	o.checkpoints, err = o.openBucket(ctx, provision.CheckpointsBucket(o.cfg.Names, 1))
	if err != nil {
		return fmt.Errorf("orchestrator: checkpoints bucket: %w", err)
	}
	o.outcomes, err = o.openBucket(ctx, provision.OutcomesBucket(o.cfg.Names, replicas, provision.CommandsMaxAge))
	if err != nil {
		return fmt.Errorf("orchestrator: outcomes bucket: %w", err)
	}
	if err := o.openBudget(ctx, replicas); err != nil {
		return fmt.Errorf("orchestrator: %w", err)
	}
	if err := o.openResources(ctx); err != nil {
		return fmt.Errorf("orchestrator: %w", err)
	}
	if err := o.watchExtensions(ctx); err != nil {
		return err
	}
	stopResults, err := o.consumeResults(ctx)
	if err != nil {
		return err
	}
	defer stopResults()

	mgr, err := lease.New(lease.Config{KV: leases, Instance: o.cfg.Instance, Partitions: o.cfg.Partitions,
		TTL: o.cfg.LeaseTTL, Logger: o.log, Now: o.leaseClock, Acquired: o.startPartition, Lost: o.stopPartition})
	if err != nil {
		return fmt.Errorf("orchestrator: %w", err)
	}
	o.leases = mgr
	o.log.Info("orchestrator running", "partitions", o.cfg.Partitions)
	err = mgr.Run(ctx) // releases every partition (stopping it) when ctx ends
	o.wg.Wait()
	return err
}

// openBucket opens the KV bucket of cfg, creating it as cfg says when it
// is missing (`cairn provision` creates it first in production).
func (o *Orchestrator) openBucket(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := o.js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = o.js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = o.js.KeyValue(ctx, cfg.Bucket)
		}
	}
	return kv, err
}
