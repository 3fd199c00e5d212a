package telemetrytest

import (
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// want lists, per service, series a scrape after one prompt with one tool
// call must show: family name and, optionally, label=value pairs one of its
// series must carry.
var want = map[string][]string{
	"orchestrator": {
		"cairn_orchestrator_commands_total type=prompt", "cairn_orchestrator_resident_sessions", "cairn_orchestrator_partitions_held",
		"cairn_agent_turns_total stop_reason=toolUse", "cairn_agent_turns_total stop_reason=stop", "cairn_agent_turn_duration_seconds",
		"cairn_agent_running_sessions", "cairn_agent_prompt_to_first_token_seconds",
		"cairn_llm_requests_total provider=openai-compatible model=fake-model stop_reason=toolUse",
		"cairn_llm_request_duration_seconds provider=openai-compatible", "cairn_llm_time_to_first_token_seconds model=fake-model",
		"cairn_llm_tokens_total direction=input", "cairn_llm_tokens_total direction=output", "cairn_llm_cost_usd_total",
		"cairn_llm_retries_total", "cairn_compactions_total reason=overflow",
		"cairn_tool_calls_total tool=ls outcome=ok", "cairn_tool_call_duration_seconds tool=ls",
		"cairn_session_appends_total outcome=ok", "cairn_session_appends_total outcome=conflict",
	},
	"toolrunner": {"cairn_toolrunner_results_total tool=ls outcome=ok", "cairn_toolrunner_call_seconds tool=ls", "cairn_toolrunner_running_calls",
		"cairn_tool_queue_pending pool=default", "cairn_tool_queue_ack_pending pool=default"},
	"projector": {"cairn_projector_lag_entries", "cairn_projector_applied_sequence", "cairn_projector_entries_applied_total"},
	"gateway":   {"cairn_gateway_requests_total", "cairn_gateway_request_duration_seconds", "cairn_gateway_sse_streams"},
	"compactor": {"cairn_compactor_summaries_total outcome=ok", "cairn_compactor_summary_seconds", "cairn_compactor_tokens_total direction=input",
		"cairn_compactor_running"},
}

// parse checks that an exposition parses and returns its families.
func parse(t *testing.T, service, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: /metrics does not parse: %v", service, err)
	}
	return fams
}

// has reports whether family has a series carrying every label pair.
func has(f *dto.MetricFamily, pairs []string) bool {
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		ok := true
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, "=")
			ok = ok && labels[k] == v
		}
		if ok {
			return true
		}
	}
	return false
}

// scrapeAll runs every service through one prompt and returns each one's
// parsed /metrics.
func scrapeAll(t *testing.T) map[string]map[string]*dto.MetricFamily {
	out := run(t, false, true)
	all := map[string]map[string]*dto.MetricFamily{}
	for service, text := range out.metrics {
		all[service] = parse(t, service, text)
	}
	return all
}

func TestEveryServiceExportsItsSeries(t *testing.T) {
	all := scrapeAll(t)
	for service, series := range want {
		fams, ok := all[service]
		if !ok {
			t.Errorf("%s was not scraped", service)
			continue
		}
		for _, s := range series {
			fields := strings.Fields(s)
			f, ok := fams[fields[0]]
			if !ok {
				t.Errorf("%s: no family %s", service, fields[0])
				continue
			}
			if !has(f, fields[1:]) {
				t.Errorf("%s: %s has no series with %v", service, fields[0], fields[1:])
			}
		}
	}
}
