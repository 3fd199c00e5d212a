package compactor

import (
	"time"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics of a compactor, under cairn_compactor_.
type metrics struct {
	summaries *prometheus.CounterVec // by outcome: ok | error
	seconds   prometheus.Histogram   // from taking a request to storing its result
	tokens    *prometheus.CounterVec // by direction: input | output
	running   prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		summaries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_compactor_summaries_total",
			Help: "Summaries answered, by outcome (ok, error)."}, []string{"outcome"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cairn_compactor_summary_seconds",
			Help: "Time from taking a request to storing its result.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 12)}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_compactor_tokens_total",
			Help: "Tokens of the summary calls, by direction (input, output)."}, []string{"direction"}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_compactor_running",
			Help: "Summaries being written now."}),
	}
	for _, c := range []prometheus.Collector{m.summaries, m.seconds, m.tokens, m.running} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observe(r compactbus.Result, took time.Duration) {
	outcome := "ok"
	if r.Error != "" {
		outcome = "error"
	}
	m.summaries.WithLabelValues(outcome).Inc()
	m.seconds.Observe(took.Seconds())
	m.tokens.WithLabelValues("input").Add(float64(r.Summary.Usage.Input + r.Summary.Usage.CacheRead + r.Summary.Usage.CacheWrite))
	m.tokens.WithLabelValues("output").Add(float64(r.Summary.Usage.Output))
}
