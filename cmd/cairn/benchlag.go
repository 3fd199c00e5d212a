package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/services/projector"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// lagProbe runs a projector beside the bench's orchestrator, on its own
// connection, and records for every entry the time from the stream storing
// it to the projector's commit covering it.
type lagProbe struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	proj *projector.Projector
	stop context.CancelFunc
	wg   sync.WaitGroup
	err  error // from Run, once wg is done

	mu      sync.Mutex
	lags    []time.Duration
	batches int
}

// startLagProbe opens a projector database in dir and runs the projector
// until close.
func startLagProbe(url, dir string) (*lagProbe, error) {
	nc, js, err := connectNATS(&natsFlags{URL: url}, "cairn-bench-projector", provision.RoleAdmin, nil)
	if err != nil {
		return nil, err
	}
	l := &lagProbe{nc: nc, js: js}
	l.proj, err = projector.New(projector.Config{JetStream: js, Dir: dir, Logger: slog.New(slog.DiscardHandler), OnCommit: l.commit})
	if err != nil {
		nc.Close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	l.stop = stop
	l.wg.Go(func() { l.err = l.proj.Run(ctx) })
	return l, nil
}

func (l *lagProbe) commit(c projector.Commit) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches++
	for _, t := range c.Stored {
		l.lags = append(l.lags, c.At.Sub(t))
	}
}

// catchUp waits until the projector has applied every entry the sessions
// stream holds now, for at most timeout; it says whether it did.
func (l *lagProbe) catchUp(ctx context.Context, timeout time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := l.js.Stream(ctx, events.Names{}.SessionsStream())
	if err != nil {
		return false, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return false, err
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for l.proj.Applied() < info.State.LastSeq {
		select {
		case <-ctx.Done():
			return false, nil
		case <-tick.C:
		}
	}
	return true, nil
}

// close stops the projector and closes its database and connection.
func (l *lagProbe) close() error {
	l.stop()
	l.wg.Wait()
	err := l.proj.Close()
	l.nc.Close()
	if l.err != nil {
		return l.err
	}
	return err
}

// report prints the lag percentiles.
func (l *lagProbe) report(w io.Writer) {
	l.mu.Lock()
	lags := slices.Clone(l.lags)
	batches := l.batches
	l.mu.Unlock()
	if len(lags) == 0 {
		fmt.Fprintf(w, "projector lag: no entry committed\n")
		return
	}
	slices.Sort(lags)
	pct := func(p float64) time.Duration { return lags[int(p*float64(len(lags)-1))].Round(time.Microsecond) }
	fmt.Fprintf(w, "projector lag (stream store → projector commit, %d entries in %d batches): p50 %s  p99 %s  max %s\n",
		len(lags), batches, pct(0.5), pct(0.99), lags[len(lags)-1].Round(time.Microsecond))
}
