package test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestChartToolrunnerConfinement checks what a toolrunner pod gives the
// tool calls it runs (issue 18): a non-root container with a read-only root,
// no privilege escalation, no capabilities and seccomp RuntimeDefault; the
// sandbox level; the runtime class; emptyDirs for the workspace root and
// /tmp; and a NetworkPolicy that lets the pods reach NATS and DNS and
// nothing else, with no ingress but the ops port from the monitoring
// namespace where one is named.
func TestChartToolrunnerConfinement(t *testing.T) {
	for _, tc := range []struct {
		name, file       string
		runtimeClass     string // "" = none
		natsNamespace    string // "" = the release's
		metricsNamespace string // "" = no ingress
		workspaceClaim   string // "" = an emptyDir
	}{
		{name: "default", natsNamespace: "nats"},
		{name: "production", file: "../ci/production-values.yaml", runtimeClass: "gvisor", natsNamespace: "nats",
			metricsNamespace: "monitoring", workspaceClaim: "cairn-workspaces"},
		{name: "minimal", file: "../ci/minimal-values.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := decodeAll(t, tc.file)
			d := r.deployments["toolrunner"]
			pod := d.Spec.Template.Spec
			checkToolrunnerContainer(t, pod.Containers[0])
			if got := deref(pod.RuntimeClassName); got != tc.runtimeClass {
				t.Errorf("runtimeClassName %q, want %q", got, tc.runtimeClass)
			}
			checkToolrunnerVolumes(t, pod, tc.workspaceClaim)
			if len(r.policies) != 1 {
				t.Fatalf("want one NetworkPolicy (the toolrunner's), got %d", len(r.policies))
			}
			np := r.policies[0]
			if !maps.Equal(np.Spec.PodSelector.MatchLabels, d.Spec.Selector.MatchLabels) {
				t.Errorf("NetworkPolicy selects %v, want the toolrunner pods %v", np.Spec.PodSelector.MatchLabels, d.Spec.Selector.MatchLabels)
			}
			checkEgress(t, np.Spec, tc.natsNamespace)
			checkIngress(t, np.Spec, tc.metricsNamespace)
		})
	}
}

func checkToolrunnerContainer(t *testing.T, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("the toolrunner container has no securityContext")
	}
	if !deref(sc.RunAsNonRoot) || deref(sc.RunAsUser) != 65532 || deref(sc.RunAsGroup) != 65532 {
		t.Errorf("runAsNonRoot %v, runAsUser %v, runAsGroup %v; want true, 65532, 65532", sc.RunAsNonRoot, sc.RunAsUser, sc.RunAsGroup)
	}
	if !deref(sc.ReadOnlyRootFilesystem) {
		t.Error("readOnlyRootFilesystem must be true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation must be false")
	}
	if deref(sc.Privileged) {
		t.Error("the toolrunner must not be privileged")
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("capabilities %+v, want drop [ALL] and none added", sc.Capabilities)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("seccompProfile %+v, want RuntimeDefault", sc.SeccompProfile)
	}
	if v := env(c, "CAIRN_SANDBOX"); v != "best-effort" {
		t.Errorf("CAIRN_SANDBOX = %q, want best-effort (pods cannot create user namespaces)", v)
	}
	if v := env(c, "CAIRN_SANDBOX_ALLOW_PORTS"); v != "" {
		t.Errorf("CAIRN_SANDBOX_ALLOW_PORTS = %q by default, want unset (no network for calls)", v)
	}
}

func checkToolrunnerVolumes(t *testing.T, pod corev1.PodSpec, claim string) {
	t.Helper()
	mounts := map[string]string{}
	for _, m := range pod.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	ws, tmp := vols[mounts["/workspaces"]], vols[mounts["/tmp"]]
	if claim != "" {
		if ws.PersistentVolumeClaim == nil || ws.PersistentVolumeClaim.ClaimName != claim {
			t.Errorf("/workspaces: %+v, want claim %s", ws.VolumeSource, claim)
		}
	} else if ws.EmptyDir == nil || ws.EmptyDir.SizeLimit == nil || ws.EmptyDir.SizeLimit.IsZero() {
		t.Errorf("/workspaces: %+v, want an emptyDir with a size limit", ws.VolumeSource)
	}
	if tmp.EmptyDir == nil || tmp.EmptyDir.SizeLimit == nil || tmp.EmptyDir.SizeLimit.String() != "1Gi" {
		t.Errorf("/tmp: %+v, want an emptyDir of at most 1Gi (the sandbox's per-call temp directories)", tmp.VolumeSource)
	}
}

// checkEgress: exactly NATS (TCP 4222, by pod labels, in natsNamespace or
// the release's) and DNS (53 UDP and TCP, kube-dns in kube-system). A rule
// with no peers or an ipBlock would open every destination.
func checkEgress(t *testing.T, spec networkingv1.NetworkPolicySpec, natsNamespace string) {
	t.Helper()
	if !slices.Contains(spec.PolicyTypes, networkingv1.PolicyTypeEgress) || !slices.Contains(spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("policyTypes %v, want Ingress and Egress", spec.PolicyTypes)
	}
	if len(spec.Egress) != 2 {
		t.Fatalf("egress has %d rules, want 2 (NATS, DNS): %+v", len(spec.Egress), spec.Egress)
	}
	for i, rule := range spec.Egress {
		if len(rule.To) != 1 || rule.To[0].IPBlock != nil || rule.To[0].PodSelector == nil {
			t.Errorf("egress[%d] reaches %+v, want one pod selector", i, rule.To)
		}
	}
	nats, dns := spec.Egress[0], spec.Egress[1]
	peer := nats.To[0]
	if !maps.Equal(peer.PodSelector.MatchLabels, map[string]string{"app.kubernetes.io/name": "nats"}) {
		t.Errorf("NATS egress selects pods %v, want app.kubernetes.io/name=nats", peer.PodSelector.MatchLabels)
	}
	checkNamespace(t, "NATS egress", peer.NamespaceSelector, natsNamespace)
	checkPorts(t, "NATS egress", nats.Ports, "TCP/4222")
	peer = dns.To[0]
	if !maps.Equal(peer.PodSelector.MatchLabels, map[string]string{"k8s-app": "kube-dns"}) {
		t.Errorf("DNS egress selects pods %v, want k8s-app=kube-dns", peer.PodSelector.MatchLabels)
	}
	checkNamespace(t, "DNS egress", peer.NamespaceSelector, "kube-system")
	checkPorts(t, "DNS egress", dns.Ports, "UDP/53", "TCP/53")
}

// checkIngress: none, or the ops port from metricsNamespace only.
func checkIngress(t *testing.T, spec networkingv1.NetworkPolicySpec, metricsNamespace string) {
	t.Helper()
	if metricsNamespace == "" {
		if len(spec.Ingress) != 0 {
			t.Errorf("ingress %+v, want none", spec.Ingress)
		}
		return
	}
	if len(spec.Ingress) != 1 || len(spec.Ingress[0].From) != 1 {
		t.Fatalf("ingress %+v, want one rule from namespace %s", spec.Ingress, metricsNamespace)
	}
	from := spec.Ingress[0].From[0]
	if from.PodSelector != nil || from.IPBlock != nil {
		t.Errorf("ingress from %+v, want only a namespace selector", from)
	}
	checkNamespace(t, "ingress", from.NamespaceSelector, metricsNamespace)
	checkPorts(t, "ingress", spec.Ingress[0].Ports, "TCP/9102")
}

// checkNamespace: sel picks namespace want by its kubernetes.io/metadata.name
// label, or is absent when want is "" (the policy's own namespace).
func checkNamespace(t *testing.T, what string, sel *metav1.LabelSelector, want string) {
	t.Helper()
	if want == "" {
		if sel != nil {
			t.Errorf("%s: namespaceSelector %+v, want none (the release's namespace)", what, sel)
		}
		return
	}
	if sel == nil || len(sel.MatchExpressions) != 0 || !maps.Equal(sel.MatchLabels, map[string]string{"kubernetes.io/metadata.name": want}) {
		t.Errorf("%s: namespaceSelector %+v, want kubernetes.io/metadata.name=%s", what, sel, want)
	}
}

func checkPorts(t *testing.T, what string, ports []networkingv1.NetworkPolicyPort, want ...string) {
	t.Helper()
	var got []string
	for _, p := range ports {
		proto := "TCP"
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		port := "any"
		if p.Port != nil {
			port = p.Port.String()
		}
		if p.EndPort != nil {
			port += "-range"
		}
		got = append(got, proto+"/"+port)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s ports %v, want %v", what, got, want)
	}
}

func env(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TestChartToolrunnerOptions: a runtime class, allowed ports with their
// egress rule, no policy, and a sandbox level the toolrunner would refuse.
func TestChartToolrunnerOptions(t *testing.T) {
	ch, err := loader.Load("..")
	if err != nil {
		t.Fatal(err)
	}
	r := decodeDocs(t, renderValues(t, ch, map[string]any{"toolrunner": map[string]any{
		"runtimeClassName": "kata", "sandbox": "required", "sandboxAllowPorts": []any{443, 5432},
		"networkPolicy": map[string]any{"extraEgress": []any{map[string]any{
			"to":    []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.1.0.0/16"}}},
			"ports": []any{map[string]any{"port": 5432, "protocol": "TCP"}},
		}}},
	}}))
	pod := r.deployments["toolrunner"].Spec.Template.Spec
	if got := deref(pod.RuntimeClassName); got != "kata" {
		t.Errorf("runtimeClassName %q, want kata", got)
	}
	c := pod.Containers[0]
	if env(c, "CAIRN_SANDBOX") != "required" || env(c, "CAIRN_SANDBOX_ALLOW_PORTS") != "443,5432" {
		t.Errorf("CAIRN_SANDBOX %q, CAIRN_SANDBOX_ALLOW_PORTS %q; want required, 443,5432", env(c, "CAIRN_SANDBOX"), env(c, "CAIRN_SANDBOX_ALLOW_PORTS"))
	}
	if len(r.policies) != 1 || len(r.policies[0].Spec.Egress) != 3 {
		t.Fatalf("want the NetworkPolicy with NATS, DNS and the extra rule, got %+v", r.policies)
	}
	extra := r.policies[0].Spec.Egress[2]
	if len(extra.To) != 1 || extra.To[0].IPBlock == nil || extra.To[0].IPBlock.CIDR != "10.1.0.0/16" {
		t.Errorf("extra egress %+v, want to 10.1.0.0/16", extra)
	}
	checkPorts(t, "extra egress", extra.Ports, "TCP/5432")

	off := decodeDocs(t, renderValues(t, ch, map[string]any{"toolrunner": map[string]any{"networkPolicy": map[string]any{"enabled": false}}}))
	if len(off.policies) != 0 {
		t.Errorf("networkPolicy.enabled=false: %d NetworkPolicies rendered", len(off.policies))
	}
	for _, bad := range []any{"strict", "", true} {
		_, err := tryRender(ch, map[string]any{"toolrunner": map[string]any{"sandbox": bad}})
		if err == nil || !strings.Contains(err.Error(), "toolrunner.sandbox") {
			t.Errorf("toolrunner.sandbox %v: render error %v, want one naming toolrunner.sandbox", bad, err)
		}
	}
}
