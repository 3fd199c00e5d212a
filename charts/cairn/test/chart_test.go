package test

import (
	"maps"
	"slices"
	"testing"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// rendered is one values file's manifests, decoded.
type rendered struct {
	deployments map[string]*appsv1.Deployment // by component
	pdbs        map[string]*policyv1.PodDisruptionBudget
	services    map[string]*corev1.Service
	jobs        []*batchv1.Job
	secrets     []*corev1.Secret
	scaled      []*kedav1alpha1.ScaledObject
	monitors    []*monitoringv1.ServiceMonitor
}

func decodeAll(t *testing.T, valuesFile string) rendered {
	t.Helper()
	return decodeDocs(t, render(t, valuesFile))
}

func decodeDocs(t *testing.T, docs []string) rendered {
	t.Helper()
	r := rendered{deployments: map[string]*appsv1.Deployment{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
		services: map[string]*corev1.Service{}}
	for _, doc := range docs {
		obj, _, err := decodeStrict(doc)
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		switch o := obj.(type) {
		case *appsv1.Deployment:
			r.deployments[o.Labels["app.kubernetes.io/component"]] = o
		case *policyv1.PodDisruptionBudget:
			r.pdbs[o.Labels["app.kubernetes.io/component"]] = o
		case *corev1.Service:
			r.services[o.Labels["app.kubernetes.io/component"]] = o
		case *batchv1.Job:
			r.jobs = append(r.jobs, o)
		case *corev1.Secret:
			r.secrets = append(r.secrets, o)
		case *kedav1alpha1.ScaledObject:
			r.scaled = append(r.scaled, o)
		case *monitoringv1.ServiceMonitor:
			r.monitors = append(r.monitors, o)
		}
	}
	return r
}

var components = []string{"compactor", "gateway", "orchestrator", "projector", "toolrunner"}

func TestChartRenders(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"default", ""}, {"production", "../ci/production-values.yaml"}, {"minimal", "../ci/minimal-values.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := decodeAll(t, tc.file)
			if got := slices.Sorted(maps.Keys(r.deployments)); !slices.Equal(got, components) {
				t.Fatalf("deployments = %v, want one per service %v", got, components)
			}
			for name, d := range r.deployments {
				checkDeployment(t, name, d)
			}
			if len(r.jobs) != 1 || r.jobs[0].Spec.Template.Spec.Containers[0].Args[0] != "provision" {
				t.Errorf("want one provision Job, got %d", len(r.jobs))
			}
			for name, p := range r.pdbs {
				d := r.deployments[name]
				if d == nil || !maps.Equal(p.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
					t.Errorf("PodDisruptionBudget %s does not select deployment %s's pods", p.Name, name)
				}
			}
			for _, name := range components {
				if r.services[name] == nil {
					t.Errorf("no Service for %s (its /metrics)", name)
				}
			}
		})
	}
}

// checkDeployment: probes, resources, a non-root read-only container, NATS
// from a Secret.
func checkDeployment(t *testing.T, name string, d *appsv1.Deployment) {
	t.Helper()
	pod := d.Spec.Template.Spec
	if !maps.Equal(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("%s: selector %v does not match the pod labels %v", name, d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("%s: pods must run as non-root", name)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", name, len(pod.Containers))
	}
	c := pod.Containers[0]
	image := "ghcr.io/cairn-agents/cairn:"
	if name == "toolrunner" {
		image = "ghcr.io/cairn-agents/cairn-toolrunner:" // has bash for the bash tool
	}
	if c.Image != image+"0.1.0" {
		t.Errorf("%s: image %q, want %s0.1.0", name, c.Image, image)
	}
	if c.Args[0] != name {
		t.Errorf("%s: runs `cairn %s`", name, c.Args[0])
	}
	if c.LivenessProbe == nil || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("%s: needs liveness and /readyz readiness probes", name)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s: needs cpu and memory requests and a memory limit, got %v", name, c.Resources)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: the container must have a read-only root and no privilege escalation", name)
	}
	var natsFromSecret bool
	for _, e := range c.Env {
		if e.Name == "CAIRN_NATS" {
			natsFromSecret = e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.Value == ""
		}
	}
	if !natsFromSecret {
		t.Errorf("%s: CAIRN_NATS must come from a Secret", name)
	}
}

func TestChartProduction(t *testing.T) {
	r := decodeAll(t, "../ci/production-values.yaml")
	if len(r.secrets) != 0 {
		t.Errorf("with nats.existingSecret the chart must not render a Secret, got %d", len(r.secrets))
	}
	if len(r.scaled) != 1 {
		t.Fatalf("want one ScaledObject, got %d", len(r.scaled))
	}
	so := r.scaled[0]
	tr := r.deployments["toolrunner"]
	if so.Spec.ScaleTargetRef == nil || so.Spec.ScaleTargetRef.Name != tr.Name {
		t.Errorf("ScaledObject targets %+v, want deployment %s", so.Spec.ScaleTargetRef, tr.Name)
	}
	if tr.Spec.Replicas != nil {
		t.Errorf("the toolrunner's replicas belong to KEDA; the deployment sets %d", *tr.Spec.Replicas)
	}
	if len(so.Spec.Triggers) != 1 {
		t.Fatalf("want one trigger, got %d", len(so.Spec.Triggers))
	}
	trig := so.Spec.Triggers[0]
	want := map[string]string{"stream": "CAIRN_TOOLS", "consumer": "toolrunner_default", "account": "$G", "lagThreshold": "16"}
	if trig.Type != "nats-jetstream" {
		t.Errorf("trigger type %q, want nats-jetstream", trig.Type)
	}
	for k, v := range want {
		if trig.Metadata[k] != v {
			t.Errorf("trigger metadata %s = %q, want %q", k, trig.Metadata[k], v)
		}
	}
	if trig.Metadata["natsServerMonitoringEndpoint"] == "" {
		t.Error("trigger needs natsServerMonitoringEndpoint")
	}
	if so.Spec.MinReplicaCount == nil || *so.Spec.MinReplicaCount != 2 || so.Spec.MaxReplicaCount == nil || *so.Spec.MaxReplicaCount != 50 {
		t.Errorf("replica bounds %v..%v, want 2..50", so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount)
	}
	if len(r.monitors) != len(components) {
		t.Errorf("want a ServiceMonitor per service, got %d", len(r.monitors))
	}
	for _, m := range r.monitors {
		comp := m.Labels["app.kubernetes.io/component"]
		if svc := r.services[comp]; svc == nil || !maps.Equal(m.Spec.Selector.MatchLabels, svc.Labels) && !subset(m.Spec.Selector.MatchLabels, svc.Labels) {
			t.Errorf("ServiceMonitor %s selects no Service of %s", m.Name, comp)
		}
	}
	for _, name := range components {
		if r.pdbs[name] == nil && name != "projector" {
			t.Errorf("production: no PodDisruptionBudget for %s", name)
		}
	}
	if args := r.jobs[0].Spec.Template.Spec.Containers[0].Args; !slices.Equal(args, []string{"provision", "--replicas", "3", "--pools", "default"}) {
		t.Errorf("provision args %v, want R3", args)
	}
	claim := r.deployments["toolrunner"].Spec.Template.Spec.Volumes[0].PersistentVolumeClaim
	if claim == nil || claim.ClaimName != "cairn-workspaces" {
		t.Errorf("toolrunner workspaces must be the shared claim, got %+v", claim)
	}
	// The first admin key comes from the operator's Secret, mounted read-only.
	gw := r.deployments["gateway"].Spec.Template.Spec
	if len(gw.Volumes) != 1 || gw.Volumes[0].Secret == nil || gw.Volumes[0].Secret.SecretName != "cairn-admin-key" {
		t.Fatalf("gateway volumes %+v, want the admin key's Secret", gw.Volumes)
	}
	args := gw.Containers[0].Args
	if i := slices.Index(args, "--bootstrap-admin-key-file"); i < 0 || i+1 == len(args) || args[i+1] != "/etc/cairn/admin-key/admin.key" {
		t.Errorf("gateway args %v, want --bootstrap-admin-key-file from the mounted Secret", args)
	}
	if m := gw.Containers[0].VolumeMounts; len(m) != 1 || !m[0].ReadOnly || m[0].MountPath != "/etc/cairn/admin-key" {
		t.Errorf("gateway mounts %+v, want the key read-only", m)
	}
}

func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func TestChartMinimal(t *testing.T) {
	r := decodeAll(t, "../ci/minimal-values.yaml")
	if len(r.pdbs) != 0 || len(r.scaled) != 0 || len(r.monitors) != 0 {
		t.Errorf("minimal: want no PDB, ScaledObject or ServiceMonitor, got %d, %d, %d", len(r.pdbs), len(r.scaled), len(r.monitors))
	}
	if len(r.secrets) != 1 || r.secrets[0].StringData["url"] != "nats://nats:4222" {
		t.Errorf("minimal: want the chart's Secret holding nats.url, got %+v", r.secrets)
	}
	if args := r.jobs[0].Spec.Template.Spec.Containers[0].Args; !slices.Equal(args, []string{"provision", "--replicas", "1", "--pools", "default"}) {
		t.Errorf("provision args %v, want R1", args)
	}
	for name, d := range r.deployments {
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
			t.Errorf("minimal: %s replicas %v, want 1", name, d.Spec.Replicas)
		}
	}
}

// TestDecodeStrictRefusesUnknownFields proves the decoding is strict.
func TestDecodeStrictRefusesUnknownFields(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicaz: 2}\n",
		"apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: x}\nspec: {scaleTargetRef: {name: y}, minReplicas: 1}\n",
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: x}\n",
	} {
		if _, _, err := decodeStrict(doc); err == nil {
			t.Errorf("decodeStrict accepted:\n%s", doc)
		}
	}
}
