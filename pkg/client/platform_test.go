package client_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/embednats"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/registry"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/services/compactor"
	"github.com/cairn-agents/cairn/services/gateway"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/cairn-agents/cairn/services/projector"
	"github.com/cairn-agents/cairn/services/toolrunner"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// The SDK is tested against a real platform in this process, as `cairn up`
// runs it: embedded NATS on a loopback port, the orchestrator with the
// scripted model, a toolrunner, the compactor, the projector, and the
// gateway on a real HTTP listener.

const testScript = `{
  "defaults": {"usage": "estimate"},
  "rules": [
    {"match": {"lastRole": "user", "contains": "list files"}, "reply": {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "I see the files."}},
    {"match": {"lastRole": "user", "contains": "wait long"}, "reply": {"delayMs": 60000, "text": "too late"}},
    {"match": {"lastRole": "user", "contains": "stream please"}, "reply": {"tokensPerSecond": 2000,
      "text": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"}},
    {"reply": {"text": "ok"}}
  ]
}`

// testPlatform is a running platform; JS reaches its NATS directly.
// adminToken is the platform admin key of every test platform (its
// gateway's bootstrap key), which newClient and the examples send.
var adminToken = func() secret.Secret {
	tok, _, err := gateway.NewKey()
	if err != nil {
		panic(err)
	}
	return tok
}()

// authGet is http.Get with the admin token.
func authGet(url string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken.Reveal())
	return http.DefaultClient.Do(req)
}

type testPlatform struct {
	URL  string
	JS   jetstream.JetStream
	stop func() error
}

// startPlatform runs the platform with its data under dir until stop.
func startPlatform(dir string) (*testPlatform, error) {
	root := filepath.Join(dir, "workspaces")
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, err
	}
	log := slog.New(slog.DiscardHandler)
	srv, err := embednats.Start(embednats.Config{DataDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0"})
	if err != nil {
		return nil, err
	}
	nc, err := srv.Connect(nats.MaxReconnects(-1))
	if err != nil {
		srv.Shutdown()
		return nil, err
	}
	var closers []func() error
	fail := func(err error) (*testPlatform, error) {
		for _, c := range closers {
			err = errors.Join(err, c())
		}
		nc.Close()
		srv.Shutdown()
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	if _, err := provision.Apply(ctx, js, events.Names{}, provision.Options{Replicas: 1}); err != nil {
		return fail(err)
	}
	sessionLog, err := session.NewJetStreamLog(ctx, js, session.WithCreate(false))
	if err != nil {
		return fail(err)
	}
	models, err := registry.New(registry.Config{Logger: log})
	if err != nil {
		return fail(err)
	}
	script, err := scripted.Parse([]byte(testScript))
	if err != nil {
		return fail(err)
	}
	sp := scripted.New(script)
	if err := models.Register(scripted.Name, func(id string) (llm.Provider, llm.Model, error) { return sp, sp.Model(id), nil }); err != nil {
		return fail(err)
	}
	runner, err := toolrunner.New(toolrunner.Config{NATSURL: srv.ClientURL(), WorkspaceRoot: root, Logger: log, Name: "sdk-test"})
	if err != nil {
		return fail(err)
	}
	comp, err := compactor.New(compactor.Config{NATSURL: srv.ClientURL(), Models: models, Logger: log, Name: "sdk-test"})
	if err != nil {
		return fail(err)
	}
	orch, err := orchestrator.New(orchestrator.Config{Conn: nc, Log: sessionLog, Models: models, DefaultModel: "scripted/test",
		Logger: log, Instance: "sdk-test", LeaseTTL: 30 * time.Second})
	if err != nil {
		return fail(err)
	}
	proj, err := projector.New(projector.Config{JetStream: js, Dir: filepath.Join(dir, "projector"), Logger: log})
	if err != nil {
		return fail(err)
	}
	closers = append(closers, proj.Close)
	gw, err := gateway.New(gateway.Config{JetStream: js, Log: sessionLog, Queries: proj.Handler(), Logger: log, WaitTimeout: 20 * time.Second,
		MaxBodyBytes: 1 << 20, BootstrapAdminKey: adminToken})
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}

	// Each tier stops after the one in front of it, as under `cairn up`.
	gwCtx, stopGW := context.WithCancel(ctx)
	orchCtx, stopOrch := context.WithCancel(ctx)
	backCtx, stopBack := context.WithCancel(ctx)
	var front, middle, back errgroup.Group
	front.Go(func() error { return gw.Serve(gwCtx, ln) })
	middle.Go(func() error { return orch.Run(orchCtx) })
	back.Go(func() error { return runner.Run(backCtx) })
	back.Go(func() error { return comp.Run(backCtx) })
	back.Go(func() error { return proj.Run(backCtx) })
	stop := func() error {
		stopGW()
		errs := []error{front.Wait()}
		stopOrch()
		errs = append(errs, middle.Wait())
		stopBack()
		errs = append(errs, back.Wait(), proj.Close(), nc.Drain())
		srv.Shutdown()
		return errors.Join(errs...)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !runner.Ready() || !gw.Ready() || !comp.Ready() {
		if time.Now().After(deadline) {
			return nil, errors.Join(errors.New("the platform did not become ready within 30s"), stop())
		}
		if err := wait(ctx, 10*time.Millisecond); err != nil {
			return nil, errors.Join(err, stop())
		}
	}
	return &testPlatform{URL: "http://" + ln.Addr().String(), JS: js, stop: stop}, nil
}

// newPlatform starts a platform that stops when t ends.
func newPlatform(t testing.TB) *testPlatform {
	t.Helper()
	p, err := startPlatform(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("platform stopped with %v", err)
		}
	})
	return p
}

// wait pauses for d, or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// eventually polls cond every 10 ms until it holds, failing t after 30 s
// with what cond last said.
func eventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	kittest.Eventually(t, 30*time.Second, what, func() error {
		if ok, state := cond(); !ok {
			return errors.New(state)
		}
		return nil
	})
}

func timeNow() time.Time { return time.Now() }
