package orchestrator

import (
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	commands        *prometheus.CounterVec
	commandsApplied prometheus.Counter
	rejected        *prometheus.CounterVec
	eventsDropped   prometheus.Counter
	recoveries      prometheus.Counter
	handovers       prometheus.Counter
	resident        prometheus.Gauge
	shrunk          prometheus.Gauge // moved by the actors' moves in and out of shrunk
	partitions      prometheus.Gauge
	agent           *agentMetrics // agent, LLM, tool and append metrics
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	m := metrics{
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_orchestrator_commands_total",
			Help: "Commands taken from the stream, by type."}, []string{"type"}),
		commandsApplied: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_orchestrator_commands_applied_total",
			Help: "Commands whose effect is in the log."}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_orchestrator_commands_rejected_total",
			Help: "Commands refused, by reason code."}, []string{"code"}),
		eventsDropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_orchestrator_events_dropped_total",
			Help: "Live events that could not be published."}),
		recoveries: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_orchestrator_recoveries_total",
			Help: "Turns closed as interrupted after a crash."}),
		handovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_orchestrator_session_handovers_total",
			Help: "Sessions reloaded by a new actor that took over the unfinished commands of one that could not go on (another writer appended, or the session could not be loaded)."}),
		resident: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_orchestrator_resident_sessions",
			Help: "Sessions held in memory."}),
		shrunk: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_orchestrator_shrunk_sessions",
			Help: "Resident sessions shrunk to their stored records while idle."}),
		partitions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_orchestrator_partitions_held",
			Help: "Partitions this instance owns."}),
	}
	for _, c := range []prometheus.Collector{m.commands, m.commandsApplied, m.rejected, m.eventsDropped, m.recoveries, m.handovers, m.resident, m.shrunk, m.partitions} {
		if err := reg.Register(c); err != nil {
			return m, err
		}
	}
	var err error
	m.agent, err = newAgentMetrics(reg)
	return m, err
}
