package test

import (
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// TestChartLint runs `helm lint` (the Helm SDK's linter: Chart.yaml, values,
// templates, and the rendered objects' names and metadata) for each values
// file; a warning or an error fails.
func TestChartLint(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"default", ""}, {"production", "../ci/production-values.yaml"}, {"minimal", "../ci/minimal-values.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := map[string]any{}
			if tc.file != "" {
				var err error
				if vals, err = chartutil.ReadValuesFile(tc.file); err != nil {
					t.Fatalf("%s: %v", tc.file, err)
				}
			}
			kv := &chartutil.KubeVersion{Version: "v1.31.0", Major: "1", Minor: "31"}
			l := lint.AllWithKubeVersion("..", vals, "cairn", kv)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				} else {
					t.Logf("helm lint: %s", m)
				}
			}
		})
	}
}
