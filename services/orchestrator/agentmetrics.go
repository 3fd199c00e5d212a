package orchestrator

import (
	"errors"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/prometheus/client_golang/prometheus"
)

// agentMetrics derives the agent, LLM and tool metrics from the harness
// events every session publishes (actor.publish), so the loop itself has no
// metrics code. Label sets are bounded: provider and model names come from
// the configured providers, tool names from the registered tools, outcomes
// from fixed lists.
//
// LLM latency is measured from the last event before the model call (the
// turn's start or the last message recorded before it) to the reply's end;
// time to first token to its first streamed delta (or its end, unstreamed).
type agentMetrics struct {
	turns          *prometheus.CounterVec
	turnSeconds    prometheus.Histogram
	running        prometheus.Gauge
	llmRequests    *prometheus.CounterVec
	llmSeconds     *prometheus.HistogramVec
	llmTTFT        *prometheus.HistogramVec
	llmTokens      *prometheus.CounterVec
	llmCost        *prometheus.CounterVec
	retries        prometheus.Counter
	compactions    *prometheus.CounterVec
	toolCalls      *prometheus.CounterVec
	toolSeconds    *prometheus.HistogramVec
	promptFirstTok prometheus.Histogram
	appends        *prometheus.CounterVec

	mu   sync.Mutex
	runs map[string]*runClock // by session, while a run goes on
}

// runClock is the timing state of one session's run.
type runClock struct {
	turn     time.Time // turn_start
	input    time.Time // last event before a model call
	firstAt  time.Time // the current reply's first streamed delta
	prompt   time.Time // a prompt was recorded and waits for its first token
	toolsRun map[string]time.Time
}

var latencyBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128}

func newAgentMetrics(reg prometheus.Registerer) (*agentMetrics, error) {
	pm := []string{"provider", "model"}
	m := &agentMetrics{
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_agent_turns_total",
			Help: "Agent turns ended, by the stop reason of their reply."}, []string{"stop_reason"}),
		turnSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cairn_agent_turn_duration_seconds",
			Help: "Duration of a turn: model call and its tool calls.", Buckets: latencyBuckets}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_agent_running_sessions",
			Help: "Sessions whose agent is running now."}),
		llmRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_llm_requests_total",
			Help: "Model calls, by provider, model and stop reason (error and aborted are failures)."}, []string{"provider", "model", "stop_reason"}),
		llmSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_llm_request_duration_seconds",
			Help: "Model call latency to the end of the reply.", Buckets: latencyBuckets}, pm),
		llmTTFT: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_llm_time_to_first_token_seconds",
			Help: "Model call latency to the first streamed delta.", Buckets: latencyBuckets}, pm),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_llm_tokens_total",
			Help: "Tokens reported by providers, by direction (input, output, cache_read, cache_write)."}, []string{"provider", "model", "direction"}),
		llmCost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_llm_cost_usd_total",
			Help: "Cost of model calls in US dollars, from the price list."}, pm),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_llm_retries_total",
			Help: "Model calls retried after a transient provider error."}),
		compactions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_compactions_total",
			Help: "Compactions started, by reason (manual, threshold, overflow: a context overflow)."}, []string{"reason"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_tool_calls_total",
			Help: "Tool calls finished, by tool and outcome (ok, error)."}, []string{"tool", "outcome"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cairn_tool_call_duration_seconds",
			Help: "Tool call duration seen by the agent, queueing included.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"tool"}),
		promptFirstTok: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cairn_agent_prompt_to_first_token_seconds",
			Help: "From the orchestrator taking a prompt command to the first token of its reply.", Buckets: latencyBuckets}),
		appends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_session_appends_total",
			Help: "Session log appends by the harness, by outcome (ok, conflict: another writer appended, error)."}, []string{"outcome"}),
		runs: map[string]*runClock{},
	}
	for _, c := range []prometheus.Collector{m.turns, m.turnSeconds, m.running, m.llmRequests, m.llmSeconds, m.llmTTFT, m.llmTokens,
		m.llmCost, m.retries, m.compactions, m.toolCalls, m.toolSeconds, m.promptFirstTok, m.appends} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, o := range []string{"ok", "conflict", "error"} {
		m.appends.WithLabelValues(o)
	}
	for _, r := range []string{"manual", "threshold", "overflow"} {
		m.compactions.WithLabelValues(r)
	}
	return m, nil
}

// appended counts one append by outcome.
func (m *agentMetrics) appended(err error) {
	switch {
	case err == nil, errors.Is(err, session.ErrDuplicate):
		m.appends.WithLabelValues("ok").Inc()
	case errors.Is(err, session.ErrConflict):
		m.appends.WithLabelValues("conflict").Inc()
	default:
		m.appends.WithLabelValues("error").Inc()
	}
}

// observe takes one harness event of session sid.
func (m *agentMetrics) observe(sid string, ev *events.Event) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	rc := m.runs[sid]
	switch ev.Type {
	case events.EvAgentStart:
		if rc == nil {
			m.running.Inc()
		}
		m.runs[sid] = &runClock{turn: now, input: now, toolsRun: map[string]time.Time{}}
		return
	case events.EvAgentEnd:
		if rc != nil {
			m.running.Dec()
			delete(m.runs, sid)
		}
		return
	case events.EvRetryStart:
		m.retries.Inc()
	case events.EvCompactionStart:
		if ev.Compaction != nil {
			m.compactions.WithLabelValues(reasonLabel(ev.Compaction.Reason)).Inc()
		}
	}
	if rc == nil {
		return
	}
	switch ev.Type {
	case events.EvTurnStart:
		rc.turn, rc.input, rc.firstAt = now, now, time.Time{}
	case events.EvTurnEnd:
		reason := ""
		if ev.Message != nil {
			reason = string(ev.Message.StopReason)
		}
		m.turns.WithLabelValues(reason).Inc()
		m.turnSeconds.Observe(now.Sub(rc.turn).Seconds())
	case events.EvMessageUpdate:
		if rc.firstAt.IsZero() {
			rc.firstAt = now
		}
	case events.EvMessageEnd:
		msg := ev.Message
		if msg == nil {
			return
		}
		if msg.Role != events.RoleAssistant {
			rc.input, rc.firstAt = now, time.Time{}
			if msg.Role == events.RoleUser && msg.CommandID != "" && rc.prompt.IsZero() {
				// the message is stamped when the orchestrator takes the command
				rc.prompt = now
				if msg.Timestamp > 0 && msg.Timestamp <= now.UnixMilli() {
					rc.prompt = time.UnixMilli(msg.Timestamp)
				}
			}
			return
		}
		first := rc.firstAt
		if first.IsZero() {
			first = now
		}
		m.llmTTFT.WithLabelValues(msg.Provider, msg.Model).Observe(first.Sub(rc.input).Seconds())
		if !rc.prompt.IsZero() {
			m.promptFirstTok.Observe(first.Sub(rc.prompt).Seconds())
			rc.prompt = time.Time{}
		}
		m.reply(msg, now.Sub(rc.input))
		rc.firstAt = time.Time{}
	case events.EvToolExecutionStart:
		rc.toolsRun[ev.ToolCallID] = now
	case events.EvToolExecutionEnd:
		outcome := "ok"
		if ev.IsError {
			outcome = "error"
		}
		m.toolCalls.WithLabelValues(ev.ToolName, outcome).Inc()
		if t, ok := rc.toolsRun[ev.ToolCallID]; ok {
			m.toolSeconds.WithLabelValues(ev.ToolName).Observe(now.Sub(t).Seconds())
			delete(rc.toolsRun, ev.ToolCallID)
		}
	}
}

func (m *agentMetrics) reply(msg *events.Message, d time.Duration) {
	p, mo := msg.Provider, msg.Model
	m.llmRequests.WithLabelValues(p, mo, string(msg.StopReason)).Inc()
	m.llmSeconds.WithLabelValues(p, mo).Observe(d.Seconds())
	if u := msg.Usage; u != nil {
		m.llmTokens.WithLabelValues(p, mo, "input").Add(float64(u.Input))
		m.llmTokens.WithLabelValues(p, mo, "output").Add(float64(u.Output))
		m.llmTokens.WithLabelValues(p, mo, "cache_read").Add(float64(u.CacheRead))
		m.llmTokens.WithLabelValues(p, mo, "cache_write").Add(float64(u.CacheWrite))
		m.llmCost.WithLabelValues(p, mo).Add(u.Cost.Total)
	}
}

func reasonLabel(r string) string {
	switch r {
	case "manual", "threshold", "overflow":
		return r
	}
	return "other"
}
