package toolrunner

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// queueCollector reports the pool's work queue at each scrape, from the
// pool consumer's info (one JetStream API call per scrape): calls waiting
// to be delivered and calls delivered but not yet answered. Before the
// runner has joined its pool it reports nothing.
type queueCollector struct {
	cons       atomic.Pointer[queueSource]
	pending    *prometheus.Desc
	ackPending *prometheus.Desc
}

type queueSource struct {
	js       jetstream.JetStream
	stream   string
	consumer string
	pool     string
}

func newQueueCollector() *queueCollector {
	return &queueCollector{
		pending: prometheus.NewDesc("cairn_tool_queue_pending", "Tool calls of the pool waiting in CAIRN_TOOLS for a runner.",
			[]string{"pool"}, nil),
		ackPending: prometheus.NewDesc("cairn_tool_queue_ack_pending", "Tool calls of the pool delivered to a runner and not yet answered.",
			[]string{"pool"}, nil),
	}
}

// watch starts reporting the consumer of pool.
func (q *queueCollector) watch(js jetstream.JetStream, stream, consumer, pool string) {
	q.cons.Store(&queueSource{js: js, stream: stream, consumer: consumer, pool: pool})
}

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- q.pending
	ch <- q.ackPending
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	src := q.cons.Load()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := src.js.Consumer(ctx, src.stream, src.consumer)
	if err != nil {
		return
	}
	info, err := c.Info(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(q.pending, prometheus.GaugeValue, float64(info.NumPending), src.pool)
	ch <- prometheus.MustNewConstMetric(q.ackPending, prometheus.GaugeValue, float64(info.NumAckPending), src.pool)
}
