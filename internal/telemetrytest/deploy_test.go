package telemetrytest

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"
)

const (
	dashboardFile = "../../deploy/grafana/cairn-dashboard.json"
	alertsFile    = "../../deploy/grafana/cairn-alerts.yml"
)

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	UID    string `json:"uid"`
	Title  string `json:"title"`
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// ruleFile is a Prometheus rule file.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// queries reads both files and returns every PromQL expression with where
// it comes from, failing on anything malformed.
func queries(t *testing.T) map[string]string {
	t.Helper()
	exprs := map[string]string{}
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: no uid, title or panels", dashboardFile)
	}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs["dashboard panel "+p.Title+" "+tg.RefID] = tg.Expr
		}
	}
	data, err = os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.For == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %q: want alert, for, labels.severity, annotations.summary and description", r.Alert)
			}
			exprs["alert "+r.Alert] = r.Expr
		}
	}
	if n == 0 {
		t.Fatalf("%s has no rules", alertsFile)
	}
	for where, e := range exprs {
		if strings.TrimSpace(e) == "" || strings.Count(e, "(") != strings.Count(e, ")") || strings.Count(e, "{") != strings.Count(e, "}") {
			t.Errorf("%s: malformed query %q", where, e)
		}
	}
	return exprs
}

var metricName = regexp.MustCompile(`\bcairn_[a-z0-9_]+\b`)

// exported is every series name the services export: counters and gauges
// by family name, histograms by their _bucket, _sum and _count series.
func exported(all map[string]map[string]*dto.MetricFamily) map[string]bool {
	names := map[string]bool{}
	for _, fams := range all {
		for name, f := range fams {
			names[name] = true
			if f.GetType() == dto.MetricType_HISTOGRAM {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					names[name+s] = true
				}
			}
		}
	}
	return names
}

// TestDashboardAndAlertsUseExportedMetrics parses the dashboard and the
// alert rules and checks that every metric they query is one a service
// exports, with the labels they filter or group by.
func TestDashboardAndAlertsUseExportedMetrics(t *testing.T) {
	exprs := queries(t)
	all := scrapeAll(t)
	names := exported(all)
	labels := map[string]map[string]bool{} // series name → label names
	for _, fams := range all {
		for name, f := range fams {
			set := map[string]bool{"le": f.GetType() == dto.MetricType_HISTOGRAM}
			for _, m := range f.Metric {
				for _, l := range m.Label {
					set[l.GetName()] = true
				}
			}
			labels[name] = set
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				labels[name+s] = set
			}
		}
	}
	used := map[string]bool{}
	for where, e := range exprs {
		found := metricName.FindAllString(e, -1)
		if len(found) == 0 {
			t.Errorf("%s queries no cairn_ metric: %q", where, e)
		}
		for _, m := range found {
			used[m] = true
			if !names[m] {
				t.Errorf("%s queries %s, which no service exports", where, m)
				continue
			}
			for _, l := range selectorLabels(e, m) {
				if !labels[m][l] {
					t.Errorf("%s filters %s by label %q, which it does not have", where, m, l)
				}
			}
		}
		for _, l := range byLabels(e) {
			ok := l == "instance" || l == "job" // target labels Prometheus adds
			for _, m := range found {
				ok = ok || labels[m][l]
			}
			if !ok {
				t.Errorf("%s groups by %q, which none of %v has", where, l, found)
			}
		}
	}
	for _, want := range []string{"cairn_projector_lag_entries", "cairn_tool_queue_pending", "cairn_llm_requests_total", "cairn_session_appends_total"} {
		if !used[want] {
			t.Errorf("nothing watches %s", want)
		}
	}
}

// selectorLabels returns the label names in the {...} selector right after
// metric in e.
func selectorLabels(e, metric string) []string {
	var out []string
	for i := strings.Index(e, metric); i >= 0; {
		rest := e[i+len(metric):]
		if strings.HasPrefix(rest, "{") {
			sel := rest[1:strings.Index(rest, "}")]
			for _, m := range strings.Split(sel, ",") {
				name, _, _ := strings.Cut(strings.TrimSpace(m), "=")
				name = strings.TrimRight(name, "!~")
				if name != "" {
					out = append(out, name)
				}
			}
		}
		j := strings.Index(rest, metric)
		if j < 0 {
			break
		}
		i += len(metric) + j
	}
	return out
}

var byClause = regexp.MustCompile(`\bby \(([^)]*)\)`)

// byLabels returns the label names of every by (...) clause in e.
func byLabels(e string) []string {
	var out []string
	for _, m := range byClause.FindAllStringSubmatch(e, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}
