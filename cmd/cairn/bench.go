package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/embednats"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/registry"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

func newBenchCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "bench",
		Short: "measure the orchestrator: N concurrent sessions x M prompts, scripted model, no-op tool",
		Args:  cobra.NoArgs,
	}
	n := c.Flags().Int("sessions", 100, "concurrent sessions")
	m := c.Flags().Int("prompts", 5, "prompts per session (each is two turns: a tool call, then an answer)")
	latency := c.Flags().Duration("latency", 0, "scripted model latency before the first token")
	ramp := c.Flags().Duration("ramp", -1, "spread the sessions' first prompts over this long, so they do not all arrive at once (default: the model latency)")
	profile := c.Flags().String("cpuprofile", "", "write a CPU profile of the run to this file")
	memprofile := c.Flags().String("memprofile", "", "write a heap profile, taken when every session is idle and shrunk, to this file")
	overTCP := c.Flags().Bool("over-tcp", false, "connect the orchestrator and the toolrunner over TCP loopback, as separate processes would (default: in-process connections, as cairn up)")
	viaGateway := c.Flags().Bool("gateway", false, "drive the running gateway --server names over HTTP with --token (an API key or an OIDC JWT; default the key cairn up recorded) instead of a platform of its own over NATS: every request authenticated, prompts followed over SSE")
	text := c.Flags().String("text", "hello", "with --gateway: the prompt's text (the gateway's default model must answer it)")
	c.RunE = func(cmd *cobra.Command, _ []string) (err error) {
		if *n < 1 || *m < 1 {
			return usagef("--sessions and --prompts must be positive")
		}
		if *viaGateway {
			for _, f := range []string{"latency", "ramp", "cpuprofile", "memprofile", "over-tcp"} {
				if cmd.Flags().Changed(f) {
					return usagef("--%s: the bench's own platform only; with --gateway the gateway's platform runs as it is", f)
				}
			}
			if *text == "" {
				return usagef("--text: must not be empty")
			}
			cl, err := clientFrom(cmd)
			if err != nil {
				return err
			}
			return gatewayBench{cl: cl, sessions: *n, prompts: *m, text: *text}.run(cmd.Context(), e.stdout)
		}
		if cmd.Flags().Changed("text") {
			return usagef("--text: with --gateway only")
		}
		if *profile != "" {
			f, err := os.Create(*profile)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, f.Close()) }() // after StopCPUProfile wrote it
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		if *ramp < 0 {
			*ramp = *latency
		}
		return runBench(cmd.Context(), e.stdout, *n, *m, *latency, *ramp, *memprofile, *overTCP)
	}
	return c
}

// noop is the bench's tool: it does nothing, so a turn measures the platform.
type noop struct{}

func (noop) Spec() events.ToolSpec {
	return events.ToolSpec{Name: "noop", Description: "does nothing", Idempotent: true,
		Parameters: json.RawMessage(`{"type":"object","additionalProperties":false}`)}
}

func (noop) Execute(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
	return tool.Text("done"), nil
}

func runBench(ctx context.Context, w io.Writer, n, m int, latency, ramp time.Duration, memprofile string, overTCP bool) (err error) {
	dir, err := os.MkdirTemp("", "cairn-bench-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	srv, err := embednats.Start(embednats.Config{DataDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	nc, err := srv.Connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	_, js, err := connectNATS(&natsFlags{URL: srv.ClientURL()}, "cairn-bench", provision.RoleAdmin, nil)
	if err != nil {
		return err
	}
	if _, err := provisionAll(ctx, js, 1); err != nil {
		return err
	}
	// The orchestrator uses one connection for everything, its session log
	// included, and so does the toolrunner: in-process, as in cairn up, or
	// over TCP loopback, as separate processes would.
	orchNC, toolNC, wiring := nc, nc, "in-process connections, as cairn up"
	if overTCP {
		wiring = "TCP loopback, as separate processes"
		if orchNC, _, err = connectNATS(&natsFlags{URL: srv.ClientURL()}, "cairn-bench-orchestrator", provision.RoleAdmin, nil); err != nil {
			return err
		}
		defer orchNC.Close()
		if toolNC, _, err = connectNATS(&natsFlags{URL: srv.ClientURL()}, "cairn-bench-toolrunner", provision.RoleAdmin, nil); err != nil {
			return err
		}
		defer toolNC.Close()
	}
	orchJS, err := jetstream.New(orchNC)
	if err != nil {
		return err
	}
	sl, err := session.NewJetStreamLog(ctx, orchJS)
	if err != nil {
		return err
	}
	lag, err := startLagProbe(srv.ClientURL(), filepath.Join(dir, "projector")) // benchlag.go
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, lag.close()) }()
	bus, err := toolbus.New(toolNC, events.Names{})
	if err != nil {
		return err
	}
	bctx, stop := context.WithCancel(ctx)
	defer stop()
	worker, err := bus.Start(bctx, toolbus.Worker{Pool: "default", Tools: []tool.Tool{noop{}}, Concurrency: 64})
	if err != nil {
		return err
	}
	script := fmt.Sprintf(`{"defaults":{"delayMs":%d,"usage":{"input":100,"output":10}},"rules":[
		{"match":{"lastRole":"user"},"reply":{"toolCalls":[{"name":"noop","arguments":{}}]}},
		{"reply":{"text":"done"}}]}`, latency.Milliseconds())
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		return err
	}
	prov := scripted.New(sc)
	reg, _ := registry.New(registry.Config{})
	if err := reg.Register(scripted.Name, func(id string) (llm.Provider, llm.Model, error) { return prov, prov.Model(id), nil }); err != nil {
		return err
	}
	orch, err := orchestrator.New(orchestrator.Config{Conn: orchNC, Log: sl, Models: reg, DefaultModel: "scripted/bench",
		Instance: "bench", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var runErr error
	go func() { defer wg.Done(); runErr = orch.Run(bctx) }()
	defer func() { stop(); wg.Wait(); err = errors.Join(err, runErr, worker.Wait()) }()

	// Follow agent_end events over core NATS: one per finished prompt.
	var mu sync.Mutex
	waiting := map[string]chan struct{}{}
	// Tool time as the orchestrator sees it: from a call's
	// tool_execution_start to its tool_execution_end (dispatch, the
	// toolrunner's round trip, the result's way back), timed where both
	// events arrive here, so the delivery delay common to both cancels out.
	toolStart := map[string]time.Time{}
	toolTime := map[string]time.Duration{}
	turns := 0
	sub, err := nc.Subscribe(events.Names{}.AllEvents(), func(msg *nats.Msg) {
		// Only the type and the session matter here; decoding whole events
		// would charge the bench's own work to the orchestrator, on the
		// same two cores (benchmem.go: eventTypeOf).
		now := time.Now()
		ev, ok := eventTypeOf(msg)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch ev.Type {
		case events.EvToolExecutionStart:
			toolStart[ev.SessionID] = now
		case events.EvToolExecutionEnd:
			if t, ok := toolStart[ev.SessionID]; ok {
				toolTime[ev.SessionID] += now.Sub(t)
				delete(toolStart, ev.SessionID)
			}
		case events.EvTurnEnd:
			turns++
		case events.EvAgentEnd:
			if ch := waiting[ev.SessionID]; ch != nil {
				delete(waiting, ev.SessionID)
				close(ch)
			}
		}
	})
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	send := func(cmd events.Command) error {
		cmd.V = events.SchemaVersion
		data, _ := json.Marshal(cmd)
		msg := nats.NewMsg(events.Names{}.CommandSubject(events.DefaultRef(cmd.SessionID)))
		msg.Data = data
		msg.Header.Set(events.HeaderMsgID, events.CommandMsgID(events.DefaultTenant, cmd.ID))
		_, err := js.PublishMsg(ctx, msg)
		return err
	}

	before := liveHeap()
	fmt.Fprintf(w, "bench: %d sessions x %d prompts, model latency %s, starts spread over %s, no-op tool through the toolrunner protocol; orchestrator and toolrunner on %s\n", n, m, latency, ramp, wiring)
	for i := 0; i < n; i++ {
		if err := send(events.Command{ID: fmt.Sprintf("c-%d", i), Type: events.CmdCreate, SessionID: fmt.Sprintf("b%d", i), Tools: []string{"noop"}}); err != nil {
			return err
		}
	}
	lat := make([][]time.Duration, n)
	tools := make([][]time.Duration, n) // tool time of each prompt
	bare := make([][]time.Duration, n)  // each prompt's latency less its tool time
	start := time.Now()
	errs := make(chan error, n)
	var run sync.WaitGroup
	for i := 0; i < n; i++ {
		run.Add(1)
		go func() {
			defer run.Done()
			sid := fmt.Sprintf("b%d", i)
			// Sessions start spread over the ramp: a real platform's
			// prompts do not arrive in one synchronised wave.
			if ramp > 0 {
				select {
				case <-time.After(time.Duration(i) * ramp / time.Duration(n)):
				case <-ctx.Done():
					errs <- ctx.Err()
					return
				}
			}
			for j := 0; j < m; j++ {
				done := make(chan struct{})
				mu.Lock()
				waiting[sid] = done
				mu.Unlock()
				t0 := time.Now()
				if err := send(events.Command{ID: fmt.Sprintf("p-%d-%d", i, j), Type: events.CmdPrompt, SessionID: sid, Text: "go"}); err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
				case <-time.After(2 * time.Minute):
					errs <- fmt.Errorf("session %s prompt %d did not finish within 2 minutes", sid, j)
					return
				case <-ctx.Done():
					errs <- ctx.Err()
					return
				}
				d := time.Since(t0)
				lat[i] = append(lat[i], d)
				mu.Lock()
				tt := toolTime[sid]
				delete(toolTime, sid)
				mu.Unlock()
				tools[i] = append(tools[i], tt)
				bare[i] = append(bare[i], d-tt)
			}
		}()
	}
	run.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if ok, err := lag.catchUp(ctx, 30*time.Second); err != nil || !ok {
		fmt.Fprintf(w, "projector: not caught up with the log 30s after the last prompt (%v)\n", err)
	}
	all, toolAll, bareAll := flatten(lat), flatten(tools), flatten(bare)
	pct := func(p float64) time.Duration { return all[int(p*float64(len(all)-1))] }
	mu.Lock()
	t := turns
	mu.Unlock()
	entries := n * (1 + m*4) // header; per prompt: user, assistant call, tool result, answer
	fmt.Fprintf(w, "prompts      %d in %s (%.0f prompts/s)\n", len(all), elapsed.Round(time.Millisecond), float64(len(all))/elapsed.Seconds())
	fmt.Fprintf(w, "turns        %d (%.0f turns/s)\n", t, float64(t)/elapsed.Seconds())
	fmt.Fprintf(w, "entries      %d appended (%.0f entries/s)\n", entries, float64(entries)/elapsed.Seconds())
	fmt.Fprintf(w, "prompt→settled, two turns, model latency excluded: p50 %s  p99 %s  max %s\n",
		(pct(0.5) - 2*latency).Round(time.Microsecond), (pct(0.99) - 2*latency).Round(time.Microsecond), (all[len(all)-1] - 2*latency).Round(time.Microsecond))
	fmt.Fprintf(w, "per turn overhead, end to end (model latency excluded): p50 %s  p99 %s\n", ((pct(0.5) - 2*latency) / 2).Round(time.Microsecond), ((pct(0.99) - 2*latency) / 2).Round(time.Microsecond))
	// Tool time is one call per prompt; the overhead without it is taken
	// per prompt (latency less that prompt's tool time), then ranked.
	bp := func(p float64) time.Duration { return (bareAll[int(p*float64(len(bareAll)-1))] - 2*latency) / 2 }
	tp := func(p float64) time.Duration { return toolAll[int(p*float64(len(toolAll)-1))] }
	fmt.Fprintf(w, "tool time (orchestrator's view: tool_execution_start→end, dispatch and toolrunner round trip): p50 %s  p99 %s\n",
		tp(0.5).Round(time.Microsecond), tp(0.99).Round(time.Microsecond))
	fmt.Fprintf(w, "per turn overhead excluding provider and tool time: p50 %s  p99 %s\n", bp(0.5).Round(time.Microsecond), bp(0.99).Round(time.Microsecond))
	if err := idleMemory(ctx, w, orch, n, before, memprofile); err != nil {
		return err
	}
	lag.report(w)
	return nil
}
