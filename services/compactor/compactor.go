package compactor

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cairn-agents/cairn/internal/opshttp"
	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/workpool"
	"github.com/cairn-agents/cairn/services/compactor/internal/work"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Compactor is one compaction worker process.
type Compactor struct {
	cfg      Config
	metrics  *metrics
	ready    atomic.Bool
	httpAddr atomic.Pointer[string]
}

// New checks cfg and returns a Compactor; Run starts it.
func New(cfg Config) (*Compactor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("compactor: register metrics: %w", err)
	}
	return &Compactor{cfg: cfg, metrics: m}, nil
}

// HTTPAddr is the address /healthz, /readyz and /metrics are served on
// once Run has started ("" if none).
func (c *Compactor) HTTPAddr() string {
	if a := c.httpAddr.Load(); a != nil {
		return *a
	}
	return ""
}

// Ready reports whether the compactor is taking requests.
func (c *Compactor) Ready() bool { return c.ready.Load() }

// Run takes requests until ctx ends, then shuts down (see the package doc).
func (c *Compactor) Run(ctx context.Context) error {
	cfg := c.cfg
	log := cfg.Logger.With("service", "compactor", "worker", cfg.Name)
	nc, err := nats.Connect(cfg.NATSURL, append([]nats.Option{nats.Name("cairn compactor " + cfg.Name), nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond)}, cfg.NATSOptions...)...)
	if err != nil {
		return fmt.Errorf("compactor: connect to %s: %w", cfg.NATSURL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("compactor: %w", err)
	}
	names := events.Names{Prefix: cfg.Prefix}
	if err := compactbus.Provision(ctx, js, names, cfg.Replicas); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("compactor: %w", err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, names.CompactionsStream(), provision.CompactorConsumer(names, cfg.AckWait))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("compactor: consumer: %w", err)
	}
	if cfg.HTTPAddr != "" {
		hs, err := opshttp.Listen(cfg.HTTPAddr, opshttp.Handler(opshttp.Config{Ready: c.Ready, Gatherer: cfg.Registry}))
		if err != nil {
			return fmt.Errorf("compactor: http listen %s: %w", cfg.HTTPAddr, err)
		}
		addr := hs.Addr()
		c.httpAddr.Store(&addr)
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := hs.Close(sctx); err != nil {
				log.Warn("http shutdown", "err", err)
			}
		}()
	}
	h := &work.Handler{JS: js, Names: names, Models: cfg.Models, Worker: cfg.Name,
		MaxDeliveries: cfg.MaxDeliveries, Log: log, Done: c.metrics.observe, Running: c.metrics.running}
	// Shutdown stops taking requests at once, and cancels running summaries
	// only after ShutdownTimeout, handing their requests back.
	pool, err := workpool.Start(ctx, workpool.Config{Consumer: cons, Handle: h.Handle, Slots: cfg.Concurrency,
		AckWait: cfg.AckWait, ShutdownTimeout: cfg.ShutdownTimeout, Logger: log})
	if err != nil {
		return fmt.Errorf("compactor: %w", err)
	}
	c.ready.Store(true)
	log.Info("compactor ready", "concurrency", cfg.Concurrency)
	<-ctx.Done()
	c.ready.Store(false)
	pool.Wait()
	if err := nc.Drain(); err != nil {
		log.Warn("nats drain", "err", err)
	}
	log.Info("compactor stopped")
	return nil
}
