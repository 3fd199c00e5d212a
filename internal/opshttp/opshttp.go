// Package opshttp is the one ops HTTP server of every Cairn service: GET
// /healthz, /readyz and /metrics, the same bodies whichever service answers.
//
//   - /healthz answers 200 {"status":"ok"} while the process runs.
//   - /readyz answers 200 {"ready":true} when the service takes work, else
//     503 {"ready":false,"reason":...}; a service with more to say (the
//     projector's position) gives its own body with Config.Readiness.
//   - /metrics serves the process's registry (pkg/telemetry.NewRegistry) in
//     the Prometheus text format.
//
// A service run alone listens with [Listen] or [Serve]; the gateway, which
// serves them inside its API (and so `cairn up`), mounts [Healthz],
// [Config.Readyz] and [Metrics] in its own route table.
//
// # Concurrency
//
// Ready and Readiness are called from HTTP handler goroutines and must be
// safe for concurrent use.
//
// # Shutdown
//
// [Server.Close] stops accepting, waits for open requests until its context
// ends and returns once the server's goroutine has; [Serve] does that when
// its context is done.
package opshttp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config says what the ops endpoints report.
type Config struct {
	// Ready reports whether the service takes work; nil means always.
	Ready func() bool
	// Reason is why the service is not ready, in /readyz's 503 body;
	// default "starting".
	Reason string
	// Readiness, if set, replaces Ready and Reason: /readyz answers its body
	// as JSON, with 200 when ready and 503 when not.
	Readiness func() (ready bool, body any)
	// Gatherer is served on /metrics; required.
	Gatherer prometheus.Gatherer
	// Fallback, if set, serves every other request (the projector's queries).
	Fallback http.Handler
}

// Handler is the ops mux: /healthz, /readyz, /metrics, then Fallback.
func Handler(c Config) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", Healthz)
	mux.HandleFunc("GET /readyz", c.Readyz())
	mux.Handle("GET /metrics", Metrics(c.Gatherer))
	if c.Fallback != nil {
		mux.Handle("/", c.Fallback)
	}
	return mux
}

// Healthz answers 200 {"status":"ok"}.
func Healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// Readyz answers /readyz from c.Readiness, or c.Ready and c.Reason.
func (c Config) Readyz() http.HandlerFunc {
	readiness := c.Readiness
	if readiness == nil {
		ready, reason := c.Ready, c.Reason
		if reason == "" {
			reason = "starting"
		}
		readiness = func() (bool, any) {
			if ready != nil && !ready() {
				return false, map[string]any{"ready": false, "reason": reason}
			}
			return true, map[string]any{"ready": true}
		}
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		ok, body := readiness()
		code := http.StatusOK
		if !ok {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, body)
	}
}

// Metrics serves g in the Prometheus text format.
func Metrics(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client went away: nothing to do
}

// Server is a running ops server.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Listen starts serving h on addr (":0" picks a port; see [Server.Addr]).
func Listen(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}, done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close shuts the server down, waiting up to ctx for open requests; it
// returns the server's failure, if it failed before.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// Serve serves h on addr until ctx is done, then closes the server, waiting
// up to 5s for open requests.
func Serve(ctx context.Context, addr string, h http.Handler) error {
	s, err := Listen(addr, h)
	if err != nil {
		return err
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return s.Close(sctx)
}
