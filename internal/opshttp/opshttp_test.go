package opshttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairn-agents/cairn/internal/opshttp"
	"github.com/prometheus/client_golang/prometheus"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func registry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Inc()
	return reg
}

// The three endpoints over a real listener, with the one set of bodies;
// after Close the server no longer answers.
func TestEndpoints(t *testing.T) {
	var ready atomic.Bool
	s, err := opshttp.Listen("127.0.0.1:0", opshttp.Handler(opshttp.Config{Ready: ready.Load, Reason: "warming up", Gatherer: registry(t)}))
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr()
	for _, c := range []struct {
		path  string
		ready bool
		code  int
		body  string
	}{
		{"/healthz", false, 200, `{"status":"ok"}`},
		{"/readyz", false, 503, `{"ready":false,"reason":"warming up"}`},
		{"/readyz", true, 200, `{"ready":true}`},
	} {
		ready.Store(c.ready)
		if code, body := get(t, base+c.path); code != c.code || strings.TrimSpace(body) != c.body {
			t.Errorf("%s (ready %v) = %d %s, want %d %s", c.path, c.ready, code, body, c.code, c.body)
		}
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "cairn_test_total 1") {
		t.Errorf("/metrics = %d %q", code, body)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("server still answers after Close")
	}
}

// A service's own readiness body is /readyz's, and every other path goes to
// the fallback (the projector's queries).
func TestReadinessAndFallback(t *testing.T) {
	var ready atomic.Bool
	h := opshttp.Handler(opshttp.Config{Gatherer: registry(t),
		Readiness: func() (bool, any) { return ready.Load(), map[string]any{"status": "x", "lag": 3} },
		Fallback: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "fallback "+r.URL.Path, http.StatusTeapot)
		})})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	s, err := opshttp.Listen("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	go func() { <-ctx.Done(); errc <- s.Close(context.Background()) }()
	base := "http://" + s.Addr()
	for _, want := range []int{503, 200} {
		code, body := get(t, base+"/readyz")
		var got map[string]any
		if err := json.Unmarshal([]byte(body), &got); err != nil || code != want || got["lag"] != 3.0 {
			t.Errorf("/readyz = %d %s (%v), want %d with the service's body", code, body, err, want)
		}
		ready.Store(true)
	}
	if code, body := get(t, base+"/v1/x"); code != http.StatusTeapot || !strings.Contains(body, "fallback /v1/x") {
		t.Errorf("/v1/x = %d %q, want the fallback", code, body)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// Serve ends when its context does, and refuses an address it cannot use.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := opshttp.Serve(ctx, "127.0.0.1:0", opshttp.Handler(opshttp.Config{Gatherer: registry(t)})); err != nil {
		t.Fatalf("Serve after cancel = %v, want nil", err)
	}
	if err := opshttp.Serve(context.Background(), "127.0.0.1:-1", http.NotFoundHandler()); err == nil {
		t.Fatal("Serve on a bad address succeeded")
	}
}
