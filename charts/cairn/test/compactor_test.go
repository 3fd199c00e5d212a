package test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestChartCompactor checks the compactor for each values file: its
// Deployment (args, probes on its --http port, grace period over its
// shutdown timeout, concurrency, provider keys), its headless metrics
// Service, its PodDisruptionBudget and its ServiceMonitor.
func TestChartCompactor(t *testing.T) {
	for _, tc := range []struct {
		name, file                  string
		shutdown, replicas, concurr string
		pods                        int32
		pdb, monitor, keys          bool
	}{
		{name: "default", shutdown: "30s", replicas: "3", concurr: "4", pods: 2, pdb: true},
		{name: "production", file: "../ci/production-values.yaml", shutdown: "60s", replicas: "3", concurr: "8", pods: 2,
			pdb: true, monitor: true, keys: true},
		{name: "minimal", file: "../ci/minimal-values.yaml", shutdown: "30s", replicas: "1", concurr: "4", pods: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := decodeAll(t, tc.file)
			d := r.deployments["compactor"]
			if d == nil {
				t.Fatal("no compactor Deployment")
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != tc.pods {
				t.Errorf("replicas %v, want %d", d.Spec.Replicas, tc.pods)
			}
			pod := d.Spec.Template.Spec
			c := pod.Containers[0]
			want := []string{"compactor", "--http", ":9104", "--shutdown-timeout", tc.shutdown, "--replicas", tc.replicas}
			if !slices.Equal(c.Args, want) {
				t.Errorf("args %v, want %v", c.Args, want)
			}
			shutdown, err := time.ParseDuration(tc.shutdown)
			if err != nil {
				t.Fatal(err)
			}
			if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= shutdown {
				t.Errorf("terminationGracePeriodSeconds %v must exceed the shutdown timeout %s", g, tc.shutdown)
			}
			if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 9104 {
				t.Errorf("ports %+v, want http on 9104", c.Ports)
			}
			http := intstr.FromString("http")
			for _, p := range []struct {
				kind, path string
				probe      *corev1.Probe
			}{{"liveness", "/healthz", c.LivenessProbe}, {"readiness", "/readyz", c.ReadinessProbe}, {"startup", "/healthz", c.StartupProbe}} {
				if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != http {
					t.Errorf("%s probe %+v, want GET %s on port http", p.kind, p.probe, p.path)
				}
			}
			if v := envValue(c.Env, "CAIRN_CONCURRENCY"); v != tc.concurr {
				t.Errorf("CAIRN_CONCURRENCY %q, want %q", v, tc.concurr)
			}
			keys := slices.ContainsFunc(c.EnvFrom, func(e corev1.EnvFromSource) bool {
				return e.SecretRef != nil && e.SecretRef.Name == "cairn-provider-keys"
			})
			if keys != tc.keys {
				t.Errorf("provider keys from envFrom: %v, want %v", keys, tc.keys)
			}
			svc := r.services["compactor"]
			if svc == nil {
				t.Fatal("no compactor Service for /metrics")
			}
			if svc.Spec.ClusterIP != corev1.ClusterIPNone || !maps.Equal(svc.Spec.Selector, d.Spec.Selector.MatchLabels) ||
				len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 9104 || svc.Spec.Ports[0].TargetPort != http {
				t.Errorf("metrics Service %+v, want headless, port 9104 to http, selecting the compactor's pods", svc.Spec)
			}
			if pdb := r.pdbs["compactor"]; (pdb != nil) != tc.pdb {
				t.Errorf("compactor PodDisruptionBudget present: %v, want %v", pdb != nil, tc.pdb)
			} else if pdb != nil && (pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1) {
				t.Errorf("compactor PodDisruptionBudget maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
			}
			monitor := slices.ContainsFunc(r.monitors, func(m *monitoringv1.ServiceMonitor) bool {
				return m.Labels["app.kubernetes.io/component"] == "compactor" && len(m.Spec.Endpoints) == 1 &&
					m.Spec.Endpoints[0].Port == "http" && m.Spec.Endpoints[0].Path == "/metrics"
			})
			if monitor != tc.monitor {
				t.Errorf("compactor ServiceMonitor on http /metrics: %v, want %v", monitor, tc.monitor)
			}
		})
	}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestChartShutdownTimeout checks that a shutdown timeout sets the grace
// period 15 s above it, and that one not in whole seconds is refused with
// the value's name rather than rendered as a grace period of 15 s.
func TestChartShutdownTimeout(t *testing.T) {
	ch, err := loader.Load("..")
	if err != nil {
		t.Fatal(err)
	}
	r := decodeDocs(t, renderValues(t, ch, map[string]any{
		"compactor":  map[string]any{"shutdownTimeout": "45s"},
		"toolrunner": map[string]any{"shutdownTimeout": "90s"},
	}))
	for name, want := range map[string]int64{"compactor": 60, "toolrunner": 105} {
		if g := r.deployments[name].Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != want {
			t.Errorf("%s: terminationGracePeriodSeconds %v, want %d", name, g, want)
		}
	}
	for _, name := range []string{"compactor", "toolrunner"} {
		for _, bad := range []string{"1m", "30", "1.5s", ""} {
			_, err := tryRender(ch, map[string]any{name: map[string]any{"shutdownTimeout": bad}})
			if err == nil || !strings.Contains(err.Error(), name+".shutdownTimeout") {
				t.Errorf("%s.shutdownTimeout %q: render error %v, want one naming %s.shutdownTimeout", name, bad, err, name)
			}
		}
	}
}
