package toolrunner

import (
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sandbox"
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
func newMetrics(reg *prometheus.Registry, running func() float64, level func() string) (*metrics, error) {
	m := &metrics{
		reg: reg,
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_toolrunner_results_total",
			Help: "Tool results stored, by tool and outcome (ok, error, interrupted)."}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_toolrunner_call_seconds",
			Help: "Execution time of tool calls.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"tool"}),
	}
	m.queue = newQueueCollector()
	for _, c := range []prometheus.Collector{m.results, m.duration, m.queue,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_toolrunner_running_calls", Help: "Tool calls executing now."}, running),
		levelCollector{level: level, desc: prometheus.NewDesc("cairn_toolrunner_sandbox_level",
			"1 for the sandbox level in force (label level: required, best-effort, off), 0 for the others.", []string{"level"}, nil)}} {
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

// levelCollector reports the sandbox level in force once Run has made the
// sandbox; before that, nothing.
type levelCollector struct {
	level func() string
	desc  *prometheus.Desc
}

func (c levelCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c levelCollector) Collect(ch chan<- prometheus.Metric) {
	cur := c.level()
	if cur == "" {
		return
	}
	for _, l := range sandbox.Levels {
		v := 0.0
		if l.String() == cur {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, l.String())
	}
}
