package toolrunner

import (
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	reg      *prometheus.Registry
	results  *prometheus.CounterVec
	duration *prometheus.HistogramVec
	queue    *queueCollector // the pool's work queue, once joined
}

// newMetrics registers the runner's series into reg (Config.Registry), which
// refuses a name registered there before.
func newMetrics(reg *prometheus.Registry, running func() float64) (*metrics, error) {
	m := &metrics{
		reg: reg,
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_toolrunner_results_total",
			Help: "Tool results stored, by tool and outcome (ok, error, interrupted)."}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_toolrunner_call_seconds",
			Help: "Execution time of tool calls.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"tool"}),
	}
	m.queue = newQueueCollector()
	for _, c := range []prometheus.Collector{m.results, m.duration, m.queue,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_toolrunner_running_calls", Help: "Tool calls executing now."}, running)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observe(r events.ToolResult) {
	outcome := "ok"
	switch {
	case r.Interrupted:
		outcome = "interrupted"
	case r.IsError:
		outcome = "error"
	}
	m.results.WithLabelValues(r.ToolName, outcome).Inc()
	m.duration.WithLabelValues(r.ToolName).Observe(float64(r.DurationMs) / 1000)
}
