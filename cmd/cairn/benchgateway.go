package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// gatewayBench drives a running gateway over HTTP, as clients do, with the
// credential clientFrom picked (--token, CAIRN_TOKEN or the key `cairn up`
// recorded): every request is authenticated, so its figures set against
// the NATS-driven bench's (no gateway, no authentication) and against
// another run with another kind of credential (an API key, an OIDC JWT)
// show what the gateway and its authentication cost per request.
type gatewayBench struct {
	cl       *client.Client
	sessions int
	prompts  int
	text     string
}

// gatewayFigures are one run's latencies, each sorted.
type gatewayFigures struct {
	creates, sends, settled []time.Duration
	elapsed                 time.Duration
}

func (b gatewayBench) run(ctx context.Context, w io.Writer) error {
	fmt.Fprintf(w, "bench: %d sessions x %d prompts through the gateway at %s (HTTP, every request authenticated)\n",
		b.sessions, b.prompts, b.cl.Server())
	if err := b.cl.Health(ctx); err != nil {
		return fmt.Errorf("gateway %s: %w", b.cl.Server(), err)
	}
	run := events.NewID()[:8] // fresh session ids, so runs against one gateway do not collide
	var (
		mu  sync.Mutex
		f   gatewayFigures
		wg  sync.WaitGroup
		err error
	)
	fail := func(e error) {
		mu.Lock()
		err = errors.Join(err, e)
		mu.Unlock()
	}
	start := time.Now()
	for i := range b.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprintf("bench-%s-%d", run, i)
			t0 := time.Now()
			if _, err := b.cl.CreateSession(ctx, client.CreateSession{ID: sid}, client.WaitApplied()); err != nil {
				fail(fmt.Errorf("create %s: %w", sid, err))
				return
			}
			create := time.Since(t0)
			mu.Lock()
			f.creates = append(f.creates, create)
			mu.Unlock()
			for j := range b.prompts {
				send, settled, err := b.prompt(ctx, sid, j)
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				f.sends, f.settled = append(f.sends, send), append(f.settled, settled)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	f.elapsed = time.Since(start)
	if err != nil {
		return err
	}
	f.report(w)
	return nil
}

// prompt sends one prompt to sid with its stream open and returns how long
// the POST took and how long until the run's agent_end came.
func (b gatewayBench) prompt(ctx context.Context, sid string, j int) (send, settled time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	stream, err := b.cl.FollowEvents(ctx, sid, client.FollowOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("events of %s: %w", sid, err)
	}
	defer stream.Close()
	cmd := client.Prompt(b.text)
	cmd.ID = fmt.Sprintf("%s-p%d", sid, j)
	t0 := time.Now()
	if _, err := b.cl.Send(ctx, sid, cmd); err != nil {
		return 0, 0, fmt.Errorf("prompt %s: %w", cmd.ID, err)
	}
	send = time.Since(t0)
	for {
		ev, err := stream.Next()
		if err != nil {
			return 0, 0, fmt.Errorf("events of %s: %w (is the default model one that answers %q?)", sid, err, b.text)
		}
		if ev.Event.Type == events.EvAgentEnd {
			return send, time.Since(t0), nil
		}
	}
}

func (f gatewayFigures) report(w io.Writer) {
	for _, d := range [][]time.Duration{f.creates, f.sends, f.settled} {
		slices.Sort(d)
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		return d[int(p*float64(len(d)-1))].Round(time.Microsecond)
	}
	line := func(name string, d []time.Duration) {
		fmt.Fprintf(w, "%-44s p50 %s  p99 %s  max %s\n", name, pct(d, 0.5), pct(d, 0.99), d[len(d)-1].Round(time.Microsecond))
	}
	fmt.Fprintf(w, "prompts      %d in %s (%.0f prompts/s)\n", len(f.settled), f.elapsed.Round(time.Millisecond), float64(len(f.settled))/f.elapsed.Seconds())
	line("create, ?wait=applied (HTTP round trip)", f.creates)
	line("prompt POST (auth, validation, publish)", f.sends)
	line("prompt→agent_end, over SSE", f.settled)
}
