package toolrunner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/mcptest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/services/toolrunner"
	"github.com/nats-io/nats.go"
)

// The test binary doubles as a toolrunner process: with CAIRN_TEST_RUNNER set
// it runs toolrunner.Run with the test tools below and exits, so tests start,
// kill and signal real processes.
func TestMain(m *testing.M) {
	kittest.Main(m, kittest.Children{"runner": runnerMain, "responder": responderMain, "mcpserver": mcptest.Serve})
}

func runnerMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	atoi := func(k string) int { n, _ := strconv.Atoi(os.Getenv(k)); return n }
	ms := func(k string) time.Duration { return time.Duration(atoi(k)) * time.Millisecond }
	name := os.Getenv("CAIRN_TEST_NAME")
	rec := os.Getenv("CAIRN_TEST_RECORDS")
	tools := []tool.Tool{noopTool{}, recordTool{dir: rec, worker: name},
		hangTool{name: "hang", dir: rec, worker: name}, hangTool{name: "hangidem", idempotent: true, dir: rec, worker: name}}
	if os.Getenv("CAIRN_TEST_BUILTIN") != "" {
		tools = nil // the built-in tools, confined by the sandbox
	}
	level := sandbox.Required
	if l := os.Getenv("CAIRN_TEST_SANDBOX"); l != "" {
		var err error
		if level, err = sandbox.ParseLevel(l); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	r, err := toolrunner.New(toolrunner.Config{
		NATSURL: os.Getenv("CAIRN_TEST_NATS"), WorkspaceRoot: os.Getenv("CAIRN_TEST_ROOT"),
		Pool: "test", Concurrency: atoi("CAIRN_TEST_CONCURRENCY"), Name: name,
		AckWait: ms("CAIRN_TEST_ACKWAIT_MS"), ShutdownTimeout: ms("CAIRN_TEST_SHUTDOWN_MS"),
		HTTPAddr: os.Getenv("CAIRN_TEST_HTTP"), Tools: tools, Sandbox: level,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
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
	}()
	if err := r.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// responderMain answers core NATS requests on bench.echo: the floor the
// round-trip benchmark compares against, measured in the same run.
func responderMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	nc, err := nats.Connect(os.Getenv("CAIRN_TEST_NATS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
	if _, err := nc.Subscribe("bench.echo", func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := nc.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("READY")
	<-ctx.Done()
	return 0
}

// noopTool does nothing: the round-trip benchmark's tool.
type noopTool struct{}

func (noopTool) Spec() events.ToolSpec { return events.ToolSpec{Name: "noop", Idempotent: true} }
func (noopTool) Execute(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
	return tool.Text("ok"), nil
}

// recordTool is non-idempotent: it appends the worker's name to a file named
// after the call, so a test counts executions per call across processes.
type recordTool struct{ dir, worker string }

func (recordTool) Spec() events.ToolSpec { return events.ToolSpec{Name: "record"} }
func (t recordTool) Execute(_ context.Context, c tool.Call, _ func(tool.Result)) (tool.Result, error) {
	if err := appendLine(filepath.Join(t.dir, "run-"+c.ID), t.worker); err != nil {
		return tool.Result{}, err
	}
	return tool.Text("recorded"), nil
}

// hangTool records its start and, on the worker named by its "hangOn"
// argument, runs until cancelled; elsewhere it returns at once.
type hangTool struct {
	name       string
	idempotent bool
	dir        string
	worker     string
}

func (t hangTool) Spec() events.ToolSpec {
	return events.ToolSpec{Name: t.name, Idempotent: t.idempotent}
}

func (t hangTool) Execute(ctx context.Context, c tool.Call, _ func(tool.Result)) (tool.Result, error) {
	if err := appendLine(filepath.Join(t.dir, "run-"+c.ID), t.worker); err != nil {
		return tool.Result{}, err
	}
	var a struct {
		HangOn string `json:"hangOn"`
	}
	_ = json.Unmarshal(c.Arguments, &a)
	if a.HangOn == t.worker {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}
	return tool.Text("done by " + t.worker), nil
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// readLines returns the lines of a record file (nil if it does not exist).
func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// proc is a toolrunner running as a child process.
type proc struct {
	name     string
	cmd      *exec.Cmd
	httpAddr string
	exited   chan struct{} // closed when the process has exited
	err      error         // its exit status, once exited is closed
}

type procOpts struct {
	concurrency, ackWaitMs, shutdownMs int
	http                               bool
	responder                          bool   // run the request/reply responder instead
	builtin                            bool   // serve the built-in tools instead of the test tools
	sandbox                            string // --sandbox level; "" is the default, required
}

// startRunner starts a toolrunner process and waits until it takes calls.
func startRunner(t testing.TB, natsURL, root, records, name string, o procOpts) *proc {
	t.Helper()
	role := "runner"
	if o.responder {
		role = "responder"
	}
	cmd := kittest.Command(role, "CAIRN_TEST_NATS="+natsURL, "CAIRN_TEST_ROOT="+root,
		"CAIRN_TEST_RECORDS="+records, "CAIRN_TEST_NAME="+name,
		fmt.Sprintf("CAIRN_TEST_CONCURRENCY=%d", o.concurrency), fmt.Sprintf("CAIRN_TEST_ACKWAIT_MS=%d", o.ackWaitMs),
		fmt.Sprintf("CAIRN_TEST_SHUTDOWN_MS=%d", o.shutdownMs))
	if o.http {
		cmd.Env = append(cmd.Env, "CAIRN_TEST_HTTP=127.0.0.1:0")
	}
	if o.sandbox != "" {
		cmd.Env = append(cmd.Env, "CAIRN_TEST_SANDBOX="+o.sandbox)
	}
	if o.builtin {
		cmd.Env = append(cmd.Env, "CAIRN_TEST_BUILTIN=1")
	}
	cmd.Stderr = &prefixWriter{t: t, name: name}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "READY"); ok {
				ready <- strings.TrimSpace(rest)
			}
		}
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	select {
	case p.httpAddr = <-ready:
	case <-p.exited:
		t.Fatalf("runner %s exited before it was ready: %v", name, p.err)
	case <-time.After(60 * time.Second):
		t.Fatalf("runner %s not ready within 60s", name)
	}
	return p
}

// prefixWriter forwards a child's stderr to the test log, only on -v or
// failure, so the child's logs are there when something goes wrong.
type prefixWriter struct {
	t    testing.TB
	name string
}

func (w *prefixWriter) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") || !strings.Contains(line, "level=") {
			w.t.Logf("[%s] %s", w.name, line)
		}
	}
	return len(b), nil
}
