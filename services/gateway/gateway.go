package gateway

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairn-agents/cairn/pkg/events"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cairn-agents/cairn/internal/opshttp"
	"github.com/cairn-agents/cairn/services/gateway/internal/fanout"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
)

// Gateway is Cairn's HTTP front door.
type Gateway struct {
	cfg         Config
	events      *fanout.Fanout // CAIRN_EVENTS, for SSE
	log         *fanout.Fanout // CAIRN_SESSIONS, for ?wait=applied
	outcomeFeed *fanout.Fanout // the outcomes bucket, for ?wait=applied (outcomes.go)
	outcomes    outcomes
	budgets     budgets       // tenants' budgets (budget.go)
	resources   resourceStore // tenants' skills and templates (resources.go)
	handler     http.Handler
	ready       atomic.Bool
	metrics     metrics
	keys        *keyStore     // the API keys bucket, watched (keys.go)
	auth        authenticator // credentials to principals (auth.go)

	patterns []string // every route served, for the OpenAPI check
}

type metrics struct {
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	commands  *prometheus.CounterVec
	sseActive prometheus.Gauge
	// authFailures counts refused credentials by route (never by key or subject).
	authFailures *prometheus.CounterVec
}

// New checks cfg and builds a Gateway; Run serves it.
func New(cfg Config) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	g := &Gateway{cfg: cfg}
	n := cfg.Names
	g.events = fanout.New(cfg.JetStream, n.EventsStream(), n.AllEvents(), 1024, cfg.Logger)
	g.log = fanout.New(cfg.JetStream, n.SessionsStream(), n.AllSessions(), 1024, cfg.Logger)
	g.outcomes = outcomes{js: cfg.JetStream, bucket: n.OutcomesBucket()}
	g.budgets = budgets{js: cfg.JetStream, names: n}
	g.resources.js, g.resources.names = cfg.JetStream, n
	g.outcomeFeed = fanout.New(cfg.JetStream, g.outcomes.stream(), g.outcomes.filter(), 1024, cfg.Logger)
	g.metrics = metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_gateway_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cairn_gateway_request_duration_seconds", Help: "HTTP request latency by route (SSE excluded).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"route"}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_gateway_commands_total", Help: "Commands accepted by type.",
		}, []string{"type"}),
		sseActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cairn_gateway_sse_streams", Help: "Live SSE streams open.",
		}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_gateway_auth_failures_total", Help: "Requests refused as unauthenticated, by route.",
		}, []string{"route"}),
	}
	g.keys = newKeyStore(cfg.JetStream, n)
	g.auth = authenticator{keys: g.keys}
	if cfg.OIDC.Issuer != "" {
		g.auth.oidc = newOIDCVerifier(cfg.OIDC)
	}
	for _, c := range []prometheus.Collector{g.metrics.requests, g.metrics.duration, g.metrics.commands, g.metrics.sseActive, g.metrics.authFailures} {
		if err := cfg.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("gateway: register metrics: %w", err)
		}
	}
	h, err := g.routes()
	if err != nil {
		return nil, err
	}
	g.handler = h
	return g, nil
}

// Ready reports whether the gateway follows the live streams (what /readyz says).
func (g *Gateway) Ready() bool { return g.ready.Load() }

// readiness is /readyz's answer: ready, the reason when not, and the
// fields of Config.ReadyzFields.
func (g *Gateway) readiness() (bool, any) {
	body := map[string]any{}
	if f := g.cfg.ReadyzFields; f != nil {
		for k, v := range f() {
			body[k] = v
		}
	}
	ready := g.ready.Load()
	body["ready"] = ready
	if !ready {
		body["reason"] = "not consuming live streams yet"
	}
	return ready, body
}

// Handler returns the API's handler (for tests and in-process mounting). The
// live parts (SSE, ?wait=applied) and API key checks work only while Run is
// running: before the keys bucket is loaded, /v1 answers 503.
func (g *Gateway) Handler() http.Handler { return g.handler }

// Run serves HTTP on cfg.Addr until ctx is cancelled, then shuts down
// gracefully: it stops accepting, lets requests finish for up to 10 s and
// closes live streams.
func (g *Gateway) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", g.cfg.Addr)
	if err != nil {
		return fmt.Errorf("gateway: listen %s: %w", g.cfg.Addr, err)
	}
	return g.Serve(ctx, ln)
}

// Serve is Run on a listener the caller opened.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{Handler: g.handler, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	grp, gctx := errgroup.WithContext(ctx)
	grp.Go(func() error { return g.events.Run(gctx) })
	grp.Go(func() error { return g.log.Run(gctx) })
	grp.Go(func() error {
		if _, err := g.outcomes.open(gctx, g.cfg.Names); err != nil {
			if gctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("gateway: %w", err)
		}
		return g.outcomeFeed.Run(gctx)
	})
	grp.Go(func() error { return g.keys.run(gctx) })
	bootstrapped := make(chan struct{}) // closed once the bootstrap key is stored
	grp.Go(func() error {
		if !g.cfg.BootstrapAdminKey.IsZero() {
			created, err := g.keys.bootstrap(gctx, g.cfg.BootstrapAdminKey, time.Now())
			if err != nil {
				if gctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("gateway: %w", err)
			}
			if created {
				g.cfg.Logger.Info("gateway: stored the bootstrap admin key")
			}
		}
		close(bootstrapped)
		return nil
	})
	grp.Go(func() error {
		for _, c := range []<-chan struct{}{g.keys.loaded, bootstrapped} {
			select {
			case <-c:
			case <-gctx.Done():
				return nil
			}
		}
		for _, f := range []*fanout.Fanout{g.events, g.log, g.outcomeFeed} {
			select {
			case <-f.Ready():
			case <-gctx.Done():
				return nil
			}
		}
		g.ready.Store(true)
		return nil
	})
	grp.Go(func() error {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("gateway: serve: %w", err)
	})
	grp.Go(func() error {
		<-gctx.Done()
		g.ready.Store(false)
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		err := srv.Shutdown(sctx)
		if err != nil {
			// The deadline passed with requests (SSE streams) still open:
			// close them. Close's error is the listener's, already gone.
			_ = srv.Close()
		}
		return nil
	})
	err := grp.Wait()
	if ctx.Err() != nil && err == nil {
		return nil
	}
	return err
}

// instrument traces, counts and times a route.
func (g *Gateway) instrument(pattern, route string, timed bool, h http.HandlerFunc) http.HandlerFunc {
	serve := traced(pattern, func(w *statusWriter, r *http.Request) { h(w, r) })
	return func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		serve(sw, r)
		if timed {
			g.metrics.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}
		g.metrics.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		if sw.err != nil {
			// After the header: the client cannot be told, most often it went away.
			g.cfg.Logger.Debug("gateway: response write failed", "route", route, "status", sw.status, "err", sw.err)
		}
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	err    error // the first failed body write, logged by instrument
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	n, err := w.ResponseWriter.Write(b)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (the body
// read deadline, commands.go).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets SSE flush through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// routes registers every route. Each /v1 route runs behind guard with the
// role routeRoles gives it; a /v1 route missing from that table is an error.
func (g *Gateway) routes() (http.Handler, error) {
	mux := http.NewServeMux()
	var missing []string
	handle := func(pattern, route string, timed bool, h http.HandlerFunc) {
		if !openRoutes[pattern] {
			min, ok := routeRoles[pattern]
			if !ok {
				missing = append(missing, pattern)
			}
			h = g.guard(route, min, h)
		}
		mux.HandleFunc(pattern, g.instrument(pattern, route, timed, h))
		g.patterns = append(g.patterns, pattern)
	}
	handle("POST /v1/sessions", "create", true, g.createSession)
	handle("POST /v1/sessions/{id}/commands", "command", true, g.postCommand)
	handle("GET /v1/sessions/{id}/events", "events", false, g.streamEvents)
	handle("GET /v1/sessions/{id}/commands/{commandId}", "command_status", true, g.getCommandStatus)
	handle("GET /v1/openapi.json", "openapi", true, serveOpenAPI)
	handle("GET /healthz", "healthz", true, opshttp.Healthz)
	handle("GET /readyz", "readyz", true, opshttp.Config{Readiness: g.readiness}.Readyz())
	mux.Handle("GET /metrics", opshttp.Metrics(g.cfg.Gatherer))
	g.patterns = append(g.patterns, "GET /metrics")
	handle("GET /v1/sessions/{id}/context", "context", true, g.getContext)
	handle("GET /v1/sessions/{id}/export", "export", true, g.export)
	handle("POST /v1/import", "import", true, g.importSession)
	handle("GET /v1/sessions/{id}/records", "records", true, g.getRecords)
	handle("GET /v1/sessions/{id}/replay", "replay", true, g.queries()) // the projector's Replay, from the log
	queries := g.queries()
	for _, p := range []string{"GET /v1/sessions", "GET /v1/sessions/{id}", "GET /v1/sessions/{id}/entries",
		"GET /v1/sessions/{id}/tree", "GET /v1/audit/tool-calls", "GET /v1/approvals", "GET /v1/usage"} {
		handle(p, "query", true, queries)
	}
	g.adminRoutes(handle)         // admin.go
	g.budgetRoutes(handle)        // budget.go
	g.tenantSettingRoutes(handle) // tenantsettings.go
	g.keyRoutes(handle)           // keyroutes.go
	g.resourceRoutes(handle)      // resources.go
	notFound := func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	}
	// Under /v1 even a path that names no route needs a principal, so the
	// API's shape is not shown to callers without one.
	mux.HandleFunc("/v1/", g.guard("none", RoleViewer, notFound))
	if err := g.consoleRoutes(mux); err != nil {
		return nil, err
	}
	mux.HandleFunc("/", notFound)
	if len(missing) > 0 {
		return nil, fmt.Errorf("gateway: routes without a role in routeRoles: %v", missing)
	}
	return mux, nil
}

func (g *Gateway) queries() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("id"); id != "" {
			if !validSessionPath(w, id) {
				return
			}
		}
		t, ok := tenant(w, r)
		if !ok {
			return
		}
		// The projector reads the tenant from this header alone: what the
		// client sent is replaced, so no query reads another tenant's rows.
		r.Header.Set(events.HeaderTenant, t)
		if g.cfg.Queries == nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "read queries are not available: no projector is configured")
			return
		}
		g.cfg.Queries.ServeHTTP(w, r)
	}
}
