package projector

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// progress is what the projector knows of its position, shared with the
// metrics and /readyz.
type progress struct {
	applied    atomic.Uint64 // last applied stream sequence, committed
	last       atomic.Uint64 // last applied stream sequence, committed or not
	streamLast atomic.Uint64 // last stream sequence seen (message metadata or stream info)
	running    atomic.Bool   // the consumer is set up and the loop runs
}

// lag is how many stream entries the projector has not applied yet.
func (p *progress) lag() uint64 {
	a, l := p.applied.Load(), p.streamLast.Load()
	if l <= a {
		return 0
	}
	return l - a
}

// seen records that the stream holds at least sequence last.
func (p *progress) seen(last uint64) {
	for {
		old := p.streamLast.Load()
		if last <= old || p.streamLast.CompareAndSwap(old, last) {
			return
		}
	}
}

type metrics struct {
	entries prometheus.Counter
	bad     prometheus.Counter
	batches prometheus.Histogram
}

func newMetrics(reg *prometheus.Registry, p *progress) (*metrics, error) {
	m := &metrics{
		entries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cairn_projector_entries_applied_total",
			Help: "Session entries applied to the read models.",
		}),
		bad: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cairn_projector_bad_entries_total",
			Help: "Entries that did not decode and were recorded under bad/.",
		}),
		batches: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cairn_projector_batch_entries",
			Help:    "Entries per committed Pebble batch.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 8),
		}),
	}
	cs := []prometheus.Collector{
		m.entries, m.bad, m.batches,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cairn_projector_lag_entries",
			Help: "Stream entries not yet applied (last stream sequence seen minus applied sequence).",
		}, func() float64 { return float64(p.lag()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cairn_projector_applied_sequence",
			Help: "Stream sequence of the last applied entry.",
		}, func() float64 { return float64(p.applied.Load()) }),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
