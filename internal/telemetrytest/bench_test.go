package telemetrytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/cairn-agents/cairn/pkg/tools"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/nats-io/nats.go"
)

const benchScript = `{"defaults": {"usage": {"input": 100, "output": 20}}, "rules": [
  {"match": {"lastRole": "user"}, "reply": {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
  {"reply": {"text": "I see the files."}}]}`

// scriptedOnly resolves scripted/<id>.
type scriptedOnly struct{ p *scripted.Provider }

func (s scriptedOnly) Resolve(ref string) (llm.Provider, llm.Model, error) {
	id, ok := strings.CutPrefix(ref, "scripted/")
	if !ok || id == "" {
		return nil, llm.Model{}, fmt.Errorf("unknown model %q", ref)
	}
	return s.p, s.p.Model(id), nil
}

func (s scriptedOnly) Providers() []string { return []string{scripted.Name} }

// BenchmarkOrchestratorPrompt runs prompts with one tool call (scripted
// model, the ls tool on an in-process worker) one after another through a
// real orchestrator on embedded NATS, with telemetry off, exporting spans
// over OTLP/HTTP to a receiver in the process, and exporting with content.
// One op is one session: create, prompt, tool call, reply, settled.
func BenchmarkOrchestratorPrompt(b *testing.B) {
	for _, mode := range []string{"off", "on", "on+content"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "off" {
				b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			} else {
				recv := newReceiver(b)
				b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.srv.URL)
			}
			shutdown, err := telemetry.Setup(context.Background(), telemetry.Config{ServiceName: "bench", TraceContent: mode == "on+content"})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = shutdown(context.Background()); telemetry.SetContent(false) }()
			benchPrompts(b)
		})
	}
}

func benchPrompts(b *testing.B) {
	ctx := context.Background()
	n := events.Names{}
	_, nc, js := natstest.RunProvisioned(b, n, provision.Options{Partitions: 4})
	root := b.TempDir()
	set, err := tools.New(root)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := set.Close(); err != nil {
			b.Errorf("close set: %v", err)
		}
	}()
	bus, err := toolbus.New(nc, n)
	if err != nil {
		b.Fatal(err)
	}
	wctx, cancelW := context.WithCancel(ctx)
	w, err := bus.Start(wctx, toolbus.Worker{Pool: "default", Tools: set.All(), WorkspaceRoot: root})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cancelW(); _ = w.Wait() }()
	sessions, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		b.Fatal(err)
	}
	sc, err := scripted.Parse([]byte(benchScript))
	if err != nil {
		b.Fatal(err)
	}
	o, err := orchestrator.New(orchestrator.Config{Conn: nc, Log: sessions, Instance: "o1", Partitions: 4,
		Models: scriptedOnly{scripted.New(sc)}, DefaultModel: "scripted/bench"})
	if err != nil {
		b.Fatal(err)
	}
	octx, cancelO := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- o.Run(octx) }()
	defer func() {
		cancelO()
		if err := <-done; err != nil {
			b.Errorf("orchestrator run: %v", err)
		}
	}()

	ends := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(n.AllEvents(), ends)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	settled := func(sid string) {
		timeout := time.After(30 * time.Second)
		for {
			select {
			case m := <-ends:
				if ev, err := events.DecodeEvent(m.Data); err == nil && ev.Type == events.EvAgentEnd && ev.SessionID == sid {
					return
				}
			case <-timeout:
				b.Fatalf("session %s did not settle within 30s", sid)
			}
		}
	}
	b.ReportAllocs()
	var cpu0 time.Duration
	for i := range b.N + 1 {
		if i == 1 {
			b.ResetTimer() // the first session warms up partitions and registrations
			cpu0 = cpuTime()
		}
		sid := fmt.Sprintf("b%d", i)
		if err := os.MkdirAll(filepath.Join(root, sid), 0o755); err != nil {
			b.Fatal(err)
		}
		send(b, nc, n, events.Command{ID: sid + "c", Type: events.CmdCreate, SessionID: sid, Tools: []string{"ls"}})
		send(b, nc, n, events.Command{ID: sid + "p", Type: events.CmdPrompt, SessionID: sid, Text: "please list files"})
		settled(sid)
	}
	b.StopTimer()
	// CPU of the whole process (server, orchestrator, worker, exporter):
	// the overhead telemetry adds, which wall-clock time, mostly waiting,
	// hides.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
