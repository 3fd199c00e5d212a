package test

import (
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// natsUser is the NATS user each component connects as.
var natsUser = map[string]string{"compactor": "compactor", "gateway": "gateway", "orchestrator": "orchestrator",
	"projector": "projector", "toolrunner": "toolrunner-default", "provision": "admin"}

// checkNATSAuth checks that pod spec s of component runs as its own NATS
// user, mounting its seed only, and verifies the servers with the CA.
func checkNATSAuth(t *testing.T, component string, s corev1.PodSpec) {
	t.Helper()
	user := natsUser[component]
	env := map[string]string{}
	for _, e := range s.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if got, want := env["CAIRN_NATS_CREDS"], "/etc/cairn/nats-creds/"+user+".nk"; got != want {
		t.Errorf("%s: CAIRN_NATS_CREDS = %q, want %q", component, got, want)
	}
	if got := env["CAIRN_NATS_CA"]; got != "/etc/cairn/nats-ca/ca.pem" {
		t.Errorf("%s: CAIRN_NATS_CA = %q, want the mounted CA", component, got)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range s.Containers[0].VolumeMounts {
		mounts[m.Name] = m
	}
	if m := mounts["nats-creds"]; m.MountPath != "/etc/cairn/nats-creds" || !m.ReadOnly {
		t.Errorf("%s: nats-creds mount %+v", component, m)
	}
	if m := mounts["nats-ca"]; m.MountPath != "/etc/cairn/nats-ca" || !m.ReadOnly {
		t.Errorf("%s: nats-ca mount %+v", component, m)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range s.Volumes {
		vols[v.Name] = v
	}
	creds := vols["nats-creds"].Secret
	if creds == nil || creds.SecretName != "cairn-nats-creds" || len(creds.Items) != 1 || creds.Items[0].Key != user+".nk" {
		t.Fatalf("%s: the credentials volume %+v must hold its own seed %s.nk only", component, creds, user)
	}
	if creds.DefaultMode == nil || *creds.DefaultMode != 0o400 {
		t.Errorf("%s: seed mode %v, want 0400", component, creds.DefaultMode)
	}
	if ca := vols["nats-ca"].Secret; ca == nil || ca.SecretName != "cairn-nats-ca" {
		t.Errorf("%s: CA volume %+v", component, ca)
	}
}

func TestChartConnectsEachServiceAsItsOwnNATSUser(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"default", ""}, {"production", "../ci/production-values.yaml"}, {"minimal", "../ci/minimal-values.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := decodeAll(t, tc.file)
			for name, d := range r.deployments {
				checkNATSAuth(t, name, d.Spec.Template.Spec)
			}
			for _, j := range r.jobs {
				checkNATSAuth(t, "provision", j.Spec.Template.Spec)
			}
		})
	}
}

func TestChartRefusesAuthWithoutItsSecret(t *testing.T) {
	ch, err := loader.Load("..")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tryRender(ch, map[string]any{"nats": map[string]any{"auth": map[string]any{"existingSecret": ""}}})
	if err == nil || !strings.Contains(err.Error(), "nats.auth.existingSecret is required") {
		t.Fatalf("auth without its Secret: %v", err)
	}
}

// TestNATSValuesSecureTheCluster checks the official NATS chart's values
// shipped beside the chart: TLS for clients and verified routes, the CA,
// and the authorization block included.
func TestNATSValuesSecureTheCluster(t *testing.T) {
	data, err := os.ReadFile("../nats-values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Config struct {
			Nats struct {
				TLS struct {
					Enabled    bool   `json:"enabled"`
					SecretName string `json:"secretName"`
				} `json:"tls"`
			} `json:"nats"`
			Cluster struct {
				Enabled bool `json:"enabled"`
				TLS     struct {
					Enabled    bool            `json:"enabled"`
					SecretName string          `json:"secretName"`
					Merge      map[string]bool `json:"merge"`
				} `json:"tls"`
			} `json:"cluster"`
			Merge map[string]string `json:"merge"`
		} `json:"config"`
		TLSCA struct {
			Enabled    bool   `json:"enabled"`
			SecretName string `json:"secretName"`
		} `json:"tlsCA"`
	}
	// Other keys (jetstream, monitor, patches) are the NATS chart's own.
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	c := v.Config
	if !c.Nats.TLS.Enabled || c.Nats.TLS.SecretName == "" {
		t.Error("client TLS is not enabled")
	}
	if !c.Cluster.Enabled || !c.Cluster.TLS.Enabled || !c.Cluster.TLS.Merge["verify"] {
		t.Error("route TLS with verification is not enabled")
	}
	if !v.TLSCA.Enabled || v.TLSCA.SecretName != "cairn-nats-ca" {
		t.Error("the CA is not configured")
	}
	if !strings.HasSuffix(c.Merge["$include"], "auth.conf") {
		t.Errorf("the authorization block is not included: %v", c.Merge)
	}
}
