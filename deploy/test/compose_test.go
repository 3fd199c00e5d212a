package test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// load loads compose.yaml the way `docker compose` does: schema validation
// (unknown keys fail), interpolation, normalisation, consistency checks.
func load(t *testing.T) *types.Project {
	t.Helper()
	return loadEnv(t, []string{})
}

// loadEnv loads compose.yaml with env as the host's environment.
func loadEnv(t *testing.T, env []string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"../compose.yaml"},
		cli.WithWorkingDirectory(".."), cli.WithEnv(env), cli.WithConsistency(true),
		cli.WithProfiles([]string{"observability"})) // every service, the profiled ones too
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(t.Context())
	if err != nil {
		t.Fatalf("compose.yaml does not load: %v", err)
	}
	return p
}

func TestComposeServices(t *testing.T) {
	p := load(t)
	want := []string{"nats-users", "nats-certs", "nats1", "nats2", "nats3", "provision", "orchestrator", "toolrunner", "compactor", "projector", "gateway",
		"otel-collector", "prometheus", "grafana"}
	got := p.ServiceNames()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("services = %v, want %v", got, want)
	}
	for _, name := range got {
		s := p.Services[name]
		if name == "provision" || name == "nats-users" || name == "nats-certs" {
			continue // runs once and exits
		}
		if strings.HasPrefix(name, "nats") {
			continue // nats-server alone in its image: provision --wait polls the nodes
		}
		if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) == 0 {
			t.Errorf("service %s has no health check", name)
		}
	}
	for name, n := range map[string]int{"orchestrator": 2, "toolrunner": 3, "compactor": 2} {
		if d := p.Services[name].Deploy; d == nil || d.Replicas == nil || *d.Replicas != n {
			t.Errorf("service %s: want %d replicas", name, n)
		}
	}
}

func TestComposeNATSCluster(t *testing.T) {
	p := load(t)
	for i, name := range []string{"nats1", "nats2", "nats3"} {
		s := p.Services[name]
		cmd := strings.Join(s.Command, " ")
		for _, flag := range []string{"--jetstream", "--store_dir /data", "--cluster_name cairn", "--routes"} {
			if !strings.Contains(cmd, flag) {
				t.Errorf("%s: command %q lacks %s", name, cmd, flag)
			}
		}
		if !strings.HasPrefix(s.Image, "cairn-nats:") || s.Build == nil || s.Build.Target != "nats" {
			t.Errorf("%s: image %q (build %+v), want cairn-nats built from the pinned module (make images, or the nats stage)", name, s.Image, s.Build)
		}
		vol := volumeAt(s, "/data")
		if vol == nil || vol.Type != types.VolumeTypeVolume || vol.Source != name {
			t.Errorf("%s: JetStream store /data must be the named volume %s, got %+v", name, name, vol)
		}
		for j, other := range []string{"nats1", "nats2", "nats3"} {
			if j != i && !strings.Contains(cmd, "nats://"+other+":6222") {
				t.Errorf("%s: routes lack %s", name, other)
			}
		}
	}
	prov := p.Services["provision"]
	if !slices.Equal([]string(prov.Command), []string{"provision", "--replicas", "3", "--wait", "2m"}) {
		t.Errorf("provision command = %v, want R3 streams, waiting for the nodes", prov.Command)
	}
	for _, name := range cairnServices {
		dep, ok := p.Services[name].DependsOn["provision"]
		if !ok || dep.Condition != types.ServiceConditionCompletedSuccessfully {
			t.Errorf("%s must start after provision completed successfully, got %+v", name, dep)
		}
		env := p.Services[name].Environment["CAIRN_NATS"]
		if env == nil || strings.Count(*env, "nats://") != 3 {
			t.Errorf("%s: CAIRN_NATS must name the three nodes, got %v", name, env)
		}
	}
}

// cairnServices are the long-running Cairn services compose.yaml deploys.
var cairnServices = []string{"orchestrator", "toolrunner", "compactor", "projector", "gateway"}

func volumeAt(s types.ServiceConfig, target string) *types.ServiceVolumeConfig {
	for i := range s.Volumes {
		if s.Volumes[i].Target == target {
			return &s.Volumes[i]
		}
	}
	return nil
}

// TestComposeDockerfile checks every build against deploy/Dockerfile: the file
// exists and defines the target, and the image runs as a non-root user.
func TestComposeDockerfile(t *testing.T) {
	p := load(t)
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?mi)^FROM\s+\S+\s+AS\s+(\S+)\s*$`).FindAllStringSubmatch(string(df), -1) {
		stages[m[1]] = true
	}
	builds := 0
	for _, name := range p.ServiceNames() {
		b := p.Services[name].Build
		if b == nil {
			continue
		}
		builds++
		if got := filepath.Join(b.Context, b.Dockerfile); !strings.HasSuffix(got, "deploy/Dockerfile") {
			t.Errorf("%s builds %s, want deploy/Dockerfile", name, got)
		}
		if _, err := os.Stat(filepath.Join(b.Context, "go.mod")); err != nil {
			t.Errorf("%s: build context %s is not the repository root: %v", name, b.Context, err)
		}
		if !stages[b.Target] {
			t.Errorf("%s: build target %q is not a stage of deploy/Dockerfile (stages %v)", name, b.Target, stages)
		}
	}
	if builds == 0 {
		t.Fatal("no service builds deploy/Dockerfile")
	}
	text := string(df)
	for _, want := range []string{"CGO_ENABLED=0", "USER 65532:65532", "FROM scratch AS cairn", "ARG GO_IMAGE", "ARG DEBIAN_IMAGE"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if strings.Contains(text, "USER root") || strings.Contains(text, "USER 0") {
		t.Error("Dockerfile switches to root")
	}
}

// TestComposeMounts checks that every file compose.yaml mounts exists, among
// them the Grafana dashboard in deploy/grafana/.
func TestComposeMounts(t *testing.T) {
	p := load(t)
	binds := 0
	for _, name := range p.ServiceNames() {
		for _, v := range p.Services[name].Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			binds++
			if strings.Contains(v.Source, filepath.Join("deploy", ".secrets")) {
				continue // made at the first start by nats-users and nats-certs
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("%s mounts %s, which does not exist: %v", name, v.Source, err)
			}
		}
	}
	if binds == 0 {
		t.Fatal("no bind mounts: the collector, Prometheus and Grafana need their configuration")
	}
	g := p.Services["grafana"]
	dash := volumeAt(g, "/var/lib/grafana/dashboards/cairn")
	if dash == nil || !strings.HasSuffix(dash.Source, filepath.Join("deploy", "grafana")) {
		t.Fatalf("grafana must mount deploy/grafana as its dashboards, got %+v", dash)
	}
	if _, err := os.Stat(filepath.Join(dash.Source, "cairn-dashboard.json")); err != nil {
		t.Errorf("the dashboard is missing: %v", err)
	}
}
