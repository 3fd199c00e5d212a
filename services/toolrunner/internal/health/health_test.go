package health

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestEndpoints(t *testing.T) {
	var ready atomic.Bool
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Inc()
	s, err := Listen("127.0.0.1:0", ready.Load, reg)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr()
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d, want 200", code)
	}
	if code, _ := get(t, base+"/readyz"); code != 503 {
		t.Errorf("/readyz before ready = %d, want 503", code)
	}
	ready.Store(true)
	if code, _ := get(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz when ready = %d, want 200", code)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "cairn_test_total 1") {
		t.Errorf("/metrics = %d %q", code, body)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("server still answers after Close")
	}
}
