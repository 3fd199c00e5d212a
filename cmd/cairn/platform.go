package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-agents/cairn/pkg/embednats"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/mcptool"
	"github.com/cairn-agents/cairn/pkg/provider/registry"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/services/compactor"
	"github.com/cairn-agents/cairn/services/gateway"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/cairn-agents/cairn/services/projector"
	"github.com/cairn-agents/cairn/services/toolrunner"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// platformConfig is what `cairn up`, `cairn run` and `cairn demo` start.
type platformConfig struct {
	DataDir       string
	HTTPAddr      string // gateway; "127.0.0.1:0" picks a port
	NATSListen    string
	WorkspaceRoot string // default <data>/workspaces
	ToolsRoot     string // the built-in tools' root; default WorkspaceRoot (toolrunner.Config)
	Script        string // scripted provider script file, optional
	Model         string // default model of new sessions
	SyncAlways    bool
	Sandbox       sandbox.Level    // of the embedded toolrunner; zero: required
	SandboxPolicy sandbox.Policy   // of the embedded toolrunner; zero: no network
	MCP           []mcptool.Server // served by the embedded toolrunner
	NoExtensions  bool             // the orchestrator calls no extension (docs/extensions.md)
	Logger        *slog.Logger
}

// platform is a running all-in-one Cairn.
type platform struct {
	URL   string // the gateway's base URL
	NATS  string // the embedded server's client URL
	Creds string // the admin's credentials file, for operator commands
	// ExtensionCreds is the extension user's seed file, for extension
	// processes (docs/extensions.md).
	ExtensionCreds string
	// AdminKey is the platform admin key, kept in KeyFile (<data>/admin.key);
	// NewKey says this start created it.
	AdminKey secret.Secret
	KeyFile  string
	NewKey   bool
	wait     func() error
}

// demoScript drives the scripted model when no script is given.
//
//go:embed demo/script.json
var demoScript []byte

// modelsFor builds the provider registry. The scripted provider is always
// there, driven by script, or by the built-in demo script when none is given.
func modelsFor(script, defaultModel string, log *slog.Logger) (*registry.Registry, error) {
	if err := events.ValidateModelRef("--model", defaultModel); err != nil {
		return nil, usagef("%v", err)
	}
	reg, err := registry.New(registry.Config{Logger: log})
	if err != nil {
		return nil, err
	}
	var sc *scripted.Script
	if script != "" {
		sc, err = scripted.Load(script)
		if err != nil {
			return nil, fmt.Errorf("--script: %w", err)
		}
	} else if sc, err = scripted.Parse(demoScript); err != nil {
		return nil, fmt.Errorf("built-in demo script: %w", err)
	}
	p := scripted.New(sc)
	err = reg.Register(scripted.Name, func(id string) (llm.Provider, llm.Model, error) { return p, p.Model(id), nil })
	return reg, err
}

// provisionAll creates or updates what every service needs, idempotently,
// with the given replicas and the default pool's consumer (as `cairn
// provision` does), and opens the session log.
func provisionAll(ctx context.Context, js jetstream.JetStream, replicas int) (session.Log, error) {
	if _, err := provision.Apply(ctx, js, events.Names{}, provision.Options{Replicas: replicas}); err != nil {
		return nil, err
	}
	log, err := session.NewJetStreamLog(ctx, js, session.WithCreate(false))
	if err != nil {
		return nil, fmt.Errorf("open the session log: %w", err)
	}
	return log, nil
}

// startPlatform starts the embedded NATS server and every service in this
// process. The returned platform's wait blocks until ctx ends and everything
// has stopped, in order: gateway, orchestrator, toolrunner, projector, NATS.
func startPlatform(ctx context.Context, cfg platformConfig) (*platform, error) {
	if cfg.WorkspaceRoot == "" {
		cfg.WorkspaceRoot = filepath.Join(cfg.DataDir, "workspaces")
	}
	if err := os.MkdirAll(cfg.WorkspaceRoot, 0o750); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(cfg.WorkspaceRoot)
	if err != nil {
		return nil, err
	}
	cfg.WorkspaceRoot = root
	// The admin key of the data directory, made at its first start: the
	// gateway stores it as the bootstrap admin key (DESIGN §9).
	adminKey, newKey, err := ensureAdminKey(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	// Every connection authenticates, each service as its own NATS user
	// (pkg/provision's permission table); the seeds are generated at the
	// first start under <data>/credentials.
	creds, all, err := platformCredentials(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	var users []embednats.User
	for _, c := range all {
		users = append(users, embednats.User{Name: c.User.Name(), Nkey: c.PublicKey,
			Publish: c.User.Permissions.Publish, Subscribe: c.User.Permissions.Subscribe, Responses: c.User.Permissions.Responses})
	}
	srv, err := embednats.Start(embednats.Config{DataDir: filepath.Join(cfg.DataDir, "nats"), Listen: cfg.NATSListen,
		SyncAlways: cfg.SyncAlways, Users: users, Logger: log.With("service", "nats")})
	if err != nil {
		return nil, err
	}
	var conns []*nats.Conn
	// connectAs opens an in-process connection as user name.
	connectAs := func(name string) (*nats.Conn, jetstream.JetStream, error) {
		opts, err := creds[name].Options()
		if err != nil {
			return nil, nil, err
		}
		nc, err := srv.Connect(append(opts, nats.Name("cairn "+name), nats.MaxReconnects(-1),
			nats.ErrorHandler(natsErrorLogger(log.With("service", name))))...)
		if err != nil {
			return nil, nil, fmt.Errorf("connect to NATS as %s: %w", name, err)
		}
		conns = append(conns, nc)
		js, err := jetstream.New(nc)
		return nc, js, err
	}
	closeAll := func() {
		for _, nc := range conns {
			nc.Close()
		}
	}
	fail := func(err error) (*platform, error) {
		closeAll()
		srv.Shutdown()
		return nil, err
	}
	_, adminJS, err := connectAs(string(provision.RoleAdmin))
	if err != nil {
		return fail(err)
	}
	if _, err := provision.Apply(ctx, adminJS, events.Names{}, provision.Options{Replicas: 1}); err != nil {
		return fail(err)
	}
	nc, js, err := connectAs(string(provision.RoleOrchestrator))
	if err != nil {
		return fail(err)
	}
	_, gwJS, err := connectAs(string(provision.RoleGateway))
	if err != nil {
		return fail(err)
	}
	_, projJS, err := connectAs(string(provision.RoleProjector))
	if err != nil {
		return fail(err)
	}
	toolOpts, err := creds["toolrunner-"+provision.DefaultPool].Options()
	if err != nil {
		return fail(err)
	}
	compOpts, err := creds[string(provision.RoleCompactor)].Options()
	if err != nil {
		return fail(err)
	}
	toolOpts = append(toolOpts, nats.ErrorHandler(natsErrorLogger(log.With("service", "toolrunner"))))
	compOpts = append(compOpts, nats.ErrorHandler(natsErrorLogger(log.With("service", "compactor"))))
	sessionLog, err := session.NewJetStreamLog(ctx, js, session.WithCreate(false))
	if err != nil {
		return fail(fmt.Errorf("open the session log: %w", err))
	}
	models, err := modelsFor(cfg.Script, cfg.Model, log)
	if err != nil {
		return fail(err)
	}
	// One registry for every embedded service, served on the gateway's
	// /metrics; a name two services both register fails here.
	reg := telemetry.NewRegistry()
	runner, err := toolrunner.New(toolrunner.Config{NATSURL: srv.ClientURL(), NATSOptions: toolOpts, WorkspaceRoot: cfg.WorkspaceRoot,
		ToolsRoot: cfg.ToolsRoot, Logger: log.With("service", "toolrunner"), Name: "embedded", Registry: reg, Sandbox: cfg.Sandbox,
		SandboxPolicy: cfg.SandboxPolicy, MCP: cfg.MCP})
	if err != nil {
		return fail(err)
	}
	comp, err := compactor.New(compactor.Config{NATSURL: srv.ClientURL(), NATSOptions: compOpts, Models: models,
		Logger: log.With("service", "compactor"), Name: "embedded", Registry: reg})
	if err != nil {
		return fail(err)
	}
	// One instance, nothing to fail over to: the default TTL, since a short
	// one only makes an overdue renewal on a loaded machine fence the only
	// orchestrator (internal/lease) and abort its runs.
	orch, err := orchestrator.New(orchestrator.Config{Conn: nc, Log: sessionLog, Models: models, DefaultModel: cfg.Model,
		WorkspaceRoot: cfg.WorkspaceRoot, Logger: log.With("service", "orchestrator"), Instance: "embedded", LeaseTTL: provision.DefaultLeaseTTL,
		Registerer: reg, NoExtensions: cfg.NoExtensions})
	if err != nil {
		return fail(err)
	}
	proj, err := projector.New(projector.Config{JetStream: projJS, Dir: filepath.Join(cfg.DataDir, "projector"),
		Logger: log.With("service", "projector"), Registry: reg})
	if err != nil {
		return fail(err)
	}
	gw, err := gateway.New(gateway.Config{JetStream: gwJS, Log: sessionLog, Queries: proj.Handler(),
		WorkspaceRoot: cfg.WorkspaceRoot, Models: models, Logger: log.With("service", "gateway"), Registerer: reg, Gatherer: reg,
		BootstrapAdminKey: adminKey, ReadyzFields: runner.SandboxFields})
	if err != nil {
		return fail(errors.Join(err, proj.Close()))
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fail(errors.Join(fmt.Errorf("--http %s: %w", cfg.HTTPAddr, err), proj.Close()))
	}

	// Each tier stops after the one in front of it. A service that fails
	// stops the whole platform.
	pctx, failed := context.WithCancel(ctx)
	gwCtx, stopGW := context.WithCancel(context.Background())
	orchCtx, stopOrch := context.WithCancel(context.Background())
	backCtx, stopBack := context.WithCancel(context.Background())
	var front, middle, back errgroup.Group
	goService := func(g *errgroup.Group, name string, run func() error) {
		g.Go(func() error {
			err := run()
			if err != nil {
				log.Error("service stopped", "service", name, "err", err)
				failed()
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
	goService(&front, "gateway", func() error { return gw.Serve(gwCtx, ln) })
	goService(&middle, "orchestrator", func() error { return orch.Run(orchCtx) })
	goService(&back, "toolrunner", func() error { return runner.Run(backCtx) })
	goService(&back, "compactor", func() error { return comp.Run(backCtx) })
	goService(&back, "projector", func() error { return proj.Run(backCtx) })
	wait := func() error {
		<-pctx.Done()
		failed()
		stopGW()
		errs := []error{front.Wait()}
		stopOrch()
		errs = append(errs, middle.Wait())
		stopBack()
		errs = append(errs, back.Wait(), proj.Close())
		for _, c := range conns {
			errs = append(errs, c.Drain())
		}
		srv.Shutdown()
		return errors.Join(errs...)
	}
	// Ready when the tools are registered and the gateway follows the streams,
	// so a session created right away sees every built-in tool.
	ready := time.NewTicker(10 * time.Millisecond)
	defer ready.Stop()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for !runner.Ready() || !gw.Ready() || !comp.Ready() {
		select {
		case <-ready.C:
		case <-pctx.Done():
			return nil, errors.Join(fmt.Errorf("the platform stopped while starting"), wait())
		case <-deadline.C:
			failed()
			return nil, errors.Join(fmt.Errorf("the platform did not become ready within 30s"), wait())
		}
	}
	return &platform{URL: "http://" + ln.Addr().String(), NATS: srv.ClientURL(),
		Creds: creds[string(provision.RoleAdmin)].SeedFile, ExtensionCreds: creds[string(provision.RoleExtension)].SeedFile, wait: wait,
		AdminKey: adminKey, KeyFile: adminKeyFile(cfg.DataDir), NewKey: newKey}, nil
}

// platformCredentials returns the current credential of every user of
// `cairn up` by user name, and every credential the server accepts
// (retiring keys of a rotation included), generating the seeds under
// <data>/credentials at the first start (directory 0700, files 0600).
func platformCredentials(dataDir string) (map[string]provision.Credential, []provision.Credential, error) {
	users, err := provision.Users(events.Names{}, nil)
	if err != nil {
		return nil, nil, err
	}
	list, err := provision.EnsureCredentials(filepath.Join(dataDir, "credentials"), users)
	if err != nil {
		return nil, nil, err
	}
	creds := map[string]provision.Credential{}
	for _, c := range list {
		if !c.Retiring {
			creds[c.User.Name()] = c
		}
	}
	return creds, list, nil
}
