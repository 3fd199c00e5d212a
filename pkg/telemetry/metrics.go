package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry returns the metrics registry of one process: empty but for the
// Go runtime and process collectors (go_*, process_*), registered once.
//
// Every service of the process registers its cairn_* series into this one
// registry and serves it on its /metrics: `cairn up` hands the same registry
// to every embedded service, so the gateway's address exports them all, and
// a service run alone (`cairn orchestrator --http ...`) gets one of its own.
//
// A registry refuses a collector whose metric names clash with one it holds
// (the same collector twice, or two collectors exporting one name), so a
// duplicate name makes the second service's New fail instead of yielding a
// scrape that Prometheus rejects.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
