package compactor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/events"
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
	nc, err := nats.Connect(cfg.NATSURL, nats.Name("cairn compactor "+cfg.Name), nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond))
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
	cons, err := js.CreateOrUpdateConsumer(ctx, names.CompactionsStream(), compactbus.ConsumerConfig(names, cfg.AckWait))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("compactor: consumer: %w", err)
	}
	if cfg.HTTPAddr != "" {
		ln, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			return fmt.Errorf("compactor: http listen %s: %w", cfg.HTTPAddr, err)
		}
		addr := ln.Addr().String()
		c.httpAddr.Store(&addr)
		defer serveHTTP(ln, c.Ready, cfg.Registry)()
	}
	h := &work.Handler{JS: js, Names: names, Models: cfg.Models, Worker: cfg.Name, AckWait: cfg.AckWait,
		MaxDeliveries: cfg.MaxDeliveries, Log: log, Done: c.metrics.observe, Running: c.metrics.running}
	// Summaries run under their own context: shutdown stops taking requests
	// at once, and cancels running summaries only after ShutdownTimeout.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var wg sync.WaitGroup
	slots := make(chan struct{}, cfg.Concurrency)
	c.ready.Store(true)
	log.Info("compactor ready", "concurrency", cfg.Concurrency)
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			<-slots
			if ctx.Err() == nil && !errors.Is(err, nats.ErrTimeout) {
				log.Warn("fetch failed", "err", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		got := false
		for m := range batch.Messages() {
			got = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				h.Handle(workCtx, m)
			}()
		}
		if !got {
			<-slots
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			log.Warn("fetch failed", "err", err)
		}
	}
	c.ready.Store(false)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(cfg.ShutdownTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cancelWork()
		<-done
	}
	if err := nc.Drain(); err != nil {
		log.Warn("nats drain", "err", err)
	}
	log.Info("compactor stopped")
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
