package telemetrytest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/registry"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/services/gateway"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/cairn-agents/cairn/services/projector"
	"github.com/cairn-agents/cairn/services/toolrunner"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The test binary doubles as a toolrunner process: with CAIRN_TT_ROLE set it
// runs toolrunner.Run with telemetry from the OTEL_* environment and exits.
//
// With CAIRN_TT_ROLE=gateway it runs a gateway the same way.
//
// Every gateway of these tests stores adminKey as its bootstrap admin key,
// and every request through http.DefaultTransport carries it.
func TestMain(m *testing.M) {
	http.DefaultTransport = withAdminKey{http.DefaultTransport}
	kittest.Main(m, kittest.Children{"toolrunner": toolrunnerMain, "gateway": gatewayMain})
}

// adminKey is the platform admin key of the tests' gateways (a test key).
const adminKey secret.Secret = "cairn_00112233445566aa_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// withAdminKey sends adminKey with a request that carries no Authorization.
type withAdminKey struct{ next http.RoundTripper }

func (w withAdminKey) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+adminKey.Reveal())
	}
	return w.next.RoundTrip(r)
}

func toolrunnerMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := slog.New(telemetry.NewHandler(os.Stderr, slog.LevelDebug)) // the runner adds its service key
	shutdown, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "toolrunner", TraceContent: os.Getenv("CAIRN_TT_CONTENT") == "1", Log: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := toolrunner.New(toolrunner.Config{NATSURL: os.Getenv("CAIRN_TT_NATS"), WorkspaceRoot: os.Getenv("CAIRN_TT_ROOT"),
		HTTPAddr: "127.0.0.1:0", Name: "runner1", ShutdownTimeout: 5 * time.Second, Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for !r.Ready() {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		fmt.Printf("READY %s\n", r.HTTPAddr())
	})
	err = r.Run(ctx)
	wg.Wait()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := shutdown(sctx); serr != nil {
		fmt.Fprintln(os.Stderr, "telemetry shutdown:", serr)
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// gatewayMain runs a gateway on 127.0.0.1:0 with telemetry from the OTEL_*
// environment until SIGTERM, and prints READY and its address once it
// follows the live streams.
func gatewayMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := telemetry.NewLogger(os.Stderr, slog.LevelDebug, "gateway")
	shutdown, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "gateway", Log: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = serveGateway(ctx, log)
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := shutdown(sctx); serr != nil {
		fmt.Fprintln(os.Stderr, "telemetry shutdown:", serr)
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func serveGateway(ctx context.Context, log *slog.Logger) error {
	nc, err := nats.Connect(os.Getenv("CAIRN_TT_NATS"))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	g, err := gateway.New(gateway.Config{JetStream: js, Logger: log, BootstrapAdminKey: adminKey})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for !g.Ready() {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		fmt.Printf("READY %s\n", ln.Addr())
	})
	err = g.Serve(ctx, ln)
	wg.Wait()
	return err
}

const (
	// apiKey is the fake provider key in both processes' environment.
	apiKey = "sk-fake-KEY-9f8e7d6c5b4a3210zz"
	// promptSecret is a secret-looking string the user put in the prompt.
	promptSecret = "AKIA-PROMPT-SECRET-7q7q7q7q"
	prompt       = "please list files; my token is " + promptSecret
	// toolContent is in the tool's output; completion is the model's reply.
	toolContent = "hello-from-the-workspace.txt"
	completion  = "I see the files."
)

// outcome is everything one run exported.
type outcome struct {
	spans    []span
	metrics  map[string]string // service → exposition text
	logs     string            // both processes' log lines
	llmCalls int64
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runPrompt runs one prompt with one tool call through an orchestrator in
// this process and a toolrunner in a child process, both exporting traces to
// an OTLP receiver, and returns what they exported. content switches content
// export on in both.
func runPrompt(t *testing.T, content bool) outcome { return runVia(t, content, false, nil) }

// run is runPrompt; with all it also runs a projector and a gateway on the
// same server and scrapes them.
func run(t *testing.T, content, all bool) outcome { return runVia(t, content, all, nil) }

// runVia is run; with via, the create and prompt commands go through a
// gateway in a third process instead of straight to NATS: via gets its URL
// and sends them.
func runVia(t *testing.T, content, all bool, via func(t *testing.T, gateway string)) outcome {
	recv := newReceiver(t)
	llm := newFakeLLM(t, apiKey)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OPENAI_COMPATIBLE_BASE_URL", llm.srv.URL+"/v1")
	t.Setenv("OPENAI_COMPATIBLE_API_KEY", apiKey)

	ctx := context.Background()
	n := events.Names{}
	srv, nc, js := natstest.RunProvisioned(t, n, provision.Options{Partitions: 4})
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "default", "s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "default", "s1", toolContent), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The toolrunner, in its own process.
	childEnv := []string{"CAIRN_TT_NATS=" + srv.ClientURL(), "CAIRN_TT_ROOT=" + root}
	if content {
		childEnv = append(childEnv, "CAIRN_TT_CONTENT=1")
	}
	runner := startChild(t, "toolrunner", childEnv)
	runnerHTTP := runner.addr

	// The orchestrator, in this process.
	var parentLog lockedBuffer
	log := telemetry.NewLogger(&parentLog, slog.LevelDebug, "orchestrator")
	shutdown, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "orchestrator", TraceContent: content, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer telemetry.SetContent(false)
	models, err := registry.New(registry.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	o, err := orchestrator.New(orchestrator.Config{Conn: nc, Log: sessions, Instance: "o1", Partitions: 4, Models: models,
		DefaultModel: "openai-compatible/fake-model", Registerer: reg, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	octx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- o.Run(octx) }()
	stopOrch := func() {
		if cancel == nil {
			return
		}
		cancel()
		cancel = nil
		if err := <-done; err != nil {
			t.Errorf("orchestrator: %v", err)
		}
	}
	defer stopOrch()
	metricsSrv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer metricsSrv.Close()

	var gw *child
	if via == nil {
		send(t, nc, n, events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", Tools: []string{"ls"}})
		send(t, nc, n, events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "s1", Text: prompt})
	} else {
		// Through a gateway process, over HTTP.
		gw = startChild(t, "gateway", []string{"CAIRN_TT_NATS=" + srv.ClientURL()})
		via(t, "http://"+gw.addr)
	}
	waitReply(t, sessions, "s1", completion)
	// The reply is in the log before the run has ended and counted it.
	waitFor(t, "the run settled", func() bool {
		m := scrape(t, metricsSrv.URL+"/metrics")
		return strings.Contains(m, `cairn_agent_turns_total{stop_reason="stop"} 1`) && strings.Contains(m, "cairn_agent_running_sessions 0")
	})
	waitFor(t, "the tool result counted", func() bool {
		return strings.Contains(scrape(t, "http://"+runnerHTTP+"/metrics"), "cairn_toolrunner_results_total{")
	})

	out := outcome{metrics: map[string]string{}, llmCalls: llm.calls.Load()}
	if all {
		// A refused command, so the rejection series exists too.
		send(t, nc, n, events.Command{ID: "c3", Type: events.CmdCreate, SessionID: "s9", Model: "nope/x"})
		waitFor(t, "a rejected command", func() bool {
			return strings.Contains(scrape(t, metricsSrv.URL+"/metrics"), "cairn_orchestrator_commands_rejected_total{")
		})
		startOps(t, srv.ClientURL(), nc, js, sessions, out.metrics)
	}
	out.metrics["orchestrator"] = scrape(t, metricsSrv.URL+"/metrics")
	out.metrics["toolrunner"] = scrape(t, "http://"+runnerHTTP+"/metrics")

	// Stop both; each flushes its spans on the way out.
	stopOrch()
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if err := shutdown(sctx); err != nil {
		t.Fatalf("telemetry shutdown: %v", err)
	}
	runner.stop()
	if gw != nil {
		gw.stop()
	}
	out.spans = recv.spans()
	out.logs = parentLog.String() + runner.log.String()
	return out
}

// child is a process of the test binary in a role (see TestMain).
type child struct {
	addr string // what it printed after READY
	log  *lockedBuffer
	stop func() // SIGTERM, then wait; idempotent
}

// startChild starts the test binary with env (its CAIRN_TT_ROLE among it)
// and waits until it prints READY.
func startChild(t *testing.T, role string, env []string) *child {
	t.Helper()
	c := &child{log: &lockedBuffer{}}
	cmd := kittest.Command(role, env...)
	cmd.Stderr = c.log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				ready <- addr
			}
		}
		exited <- cmd.Wait()
	}()
	c.stop = sync.OnceFunc(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("%s exited with %v; its log:\n%s", role, err, c.log.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("%s did not stop on SIGTERM; its log:\n%s", role, c.log.String())
		}
	})
	t.Cleanup(c.stop)
	select {
	case c.addr = <-ready:
	case err := <-exited:
		t.Fatalf("%s exited before it was ready: %v\n%s", role, err, c.log.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s not ready within 30s\n%s", role, c.log.String())
	}
	return c
}

func send(t testing.TB, nc *nats.Conn, n events.Names, cmd events.Command) {
	t.Helper()
	cmd.V = events.SchemaVersion
	data, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	msg := nats.NewMsg(n.CommandSubject(events.DefaultRef(cmd.SessionID)))
	msg.Data = data
	msg.Header.Set(events.HeaderMsgID, cmd.ID)
	js, err := jetstreamOf(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// waitReply polls the session's log until its last assistant message says want.
func waitReply(t testing.TB, log session.Log, sid, want string) {
	t.Helper()
	last := ""
	kittest.Eventually(t, 60*time.Second, fmt.Sprintf("reply %q", want), func() error {
		if recs, err := log.Read(context.Background(), events.DefaultRef(sid), 0); err == nil {
			for _, r := range recs {
				if m := r.Entry.Message; m != nil && m.Role == events.RoleAssistant {
					last = m.Content.Text() + " " + m.ErrorMessage
				}
			}
			if strings.TrimSpace(last) == want {
				return nil
			}
		}
		return fmt.Errorf("last assistant message: %q", last)
	})
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: status %d, %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// startOps runs a projector until it has applied the whole log, a gateway
// that has answered one query and a compactor that has written one summary,
// and scrapes them into metrics.
func startOps(t *testing.T, natsURL string, nc *nats.Conn, js jetstream.JetStream, log session.Log, metrics map[string]string) {
	t.Helper()
	p, err := projector.New(projector.Config{JetStream: js, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("projector: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("projector close: %v", err)
		}
	}()
	kittest.Eventually(t, 30*time.Second, "projector caught up", func() error {
		select {
		case err := <-done:
			t.Fatalf("projector stopped: %v", err)
		default:
		}
		if p.Applied() == 0 || p.Lag() > 0 {
			return fmt.Errorf("applied %d, lag %d", p.Applied(), p.Lag())
		}
		return nil
	})
	ops := httptest.NewServer(p.OpsHandler())
	defer ops.Close()
	metrics["projector"] = scrape(t, ops.URL+"/metrics")

	g, err := gateway.New(gateway.Config{JetStream: js, Log: log, Queries: p.Handler(), BootstrapAdminKey: adminKey})
	if err != nil {
		t.Fatal(err)
	}
	gwLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gwCtx, stopGW := context.WithCancel(context.Background())
	gwDone := make(chan error, 1)
	go func() { gwDone <- g.Serve(gwCtx, gwLn) }()
	defer func() {
		stopGW()
		if err := <-gwDone; err != nil {
			t.Errorf("gateway stopped with %v", err)
		}
	}()
	kittest.Eventually(t, 10*time.Second, "the gateway ready", g.Ready)
	gw := struct{ URL string }{"http://" + gwLn.Addr().String()}
	resp, err := http.Get(gw.URL + "/v1/sessions/s1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("gateway GET /v1/sessions/s1: %d", resp.StatusCode)
	}
	metrics["gateway"] = scrape(t, gw.URL+"/metrics")

	c, stop := startCompactor(t, natsURL, "127.0.0.1:0")
	defer stop()
	summarize(t, context.Background(), nc)
	// The compactor counts a summary after the client may have read it.
	url := "http://" + c.HTTPAddr() + "/metrics"
	waitFor(t, "the summary counted", func() bool { return strings.Contains(scrape(t, url), "cairn_compactor_summaries_total{") })
	metrics["compactor"] = scrape(t, url)
}

// waitFor polls cond until it holds, for at most 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	kittest.Eventually(t, 30*time.Second, what, cond)
}
