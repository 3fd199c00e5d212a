package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

// httpPort is the port of a Cairn service's --http flag (":9101"), or "".
func httpPort(s types.ServiceConfig) string {
	i := slices.Index([]string(s.Command), "--http")
	if i < 0 || i+1 >= len(s.Command) {
		return ""
	}
	_, port, _ := strings.Cut(s.Command[i+1], ":")
	return port
}

// TestComposeHTTPPorts checks that each Cairn service serves /healthz,
// /readyz and /metrics on a port of its own and that its health check asks
// that port.
func TestComposeHTTPPorts(t *testing.T) {
	p := load(t)
	seen := map[string]string{}
	for _, name := range cairnServices {
		s := p.Services[name]
		port := httpPort(s)
		if port == "" {
			t.Errorf("%s: command %v has no --http :<port>", name, s.Command)
			continue
		}
		if other, dup := seen[port]; dup {
			t.Errorf("%s and %s both listen on %s", name, other, port)
		}
		seen[port] = name
		if check := strings.Join(s.HealthCheck.Test, " "); !strings.Contains(check, "127.0.0.1/"+port) &&
			!strings.Contains(check, "127.0.0.1:"+port+"/") {
			t.Errorf("%s: health check %q does not ask its --http port %s", name, check, port)
		}
	}
}

// TestComposeCompactor checks the compactor: ready on /readyz, a stop grace
// period longer than its --shutdown-timeout (running summaries finish, the
// rest are handed back), started after provision.
func TestComposeCompactor(t *testing.T) {
	s := load(t).Services["compactor"]
	if !slices.Equal(s.Command[:1], []string{"compactor"}) {
		t.Fatalf("compactor command = %v", s.Command)
	}
	if check := strings.Join(s.HealthCheck.Test, " "); !strings.Contains(check, "/readyz") {
		t.Errorf("compactor health check %q, want /readyz", check)
	}
	shutdown := 30 * time.Second // the flag's default
	if i := slices.Index([]string(s.Command), "--shutdown-timeout"); i >= 0 {
		d, err := time.ParseDuration(s.Command[i+1])
		if err != nil {
			t.Fatalf("--shutdown-timeout %q: %v", s.Command[i+1], err)
		}
		shutdown = d
	}
	if s.StopGracePeriod == nil || time.Duration(*s.StopGracePeriod) <= shutdown {
		t.Errorf("compactor stop_grace_period %v must exceed its shutdown timeout %v", s.StopGracePeriod, shutdown)
	}
	if c := s.Environment["CAIRN_CONCURRENCY"]; c == nil {
		t.Error("compactor: CAIRN_CONCURRENCY unset")
	} else if n, err := strconv.Atoi(*c); err != nil || n < 1 {
		t.Errorf("compactor: CAIRN_CONCURRENCY %q, want a positive integer", *c)
	}
}

// TestComposeProviderKeys checks that the services calling models (the
// orchestrator, and the compactor with each request's model) get the host's
// provider keys, and no service gets a key the host does not have.
func TestComposeProviderKeys(t *testing.T) {
	keys := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_COMPATIBLE_BASE_URL", "OPENAI_COMPATIBLE_API_KEY"}
	var env []string
	for _, k := range keys {
		env = append(env, k+"=value-of-"+k)
	}
	p := loadEnv(t, env)
	for _, name := range []string{"orchestrator", "compactor"} {
		for _, k := range keys {
			if v := p.Services[name].Environment[k]; v == nil || *v != "value-of-"+k {
				t.Errorf("%s: %s = %v, want the host's value", name, k, v)
			}
		}
	}
	for _, name := range []string{"toolrunner", "projector", "gateway"} {
		for _, k := range keys {
			if _, ok := p.Services[name].Environment[k]; ok {
				t.Errorf("%s gets %s; only the services calling models need it", name, k)
			}
		}
	}
	for _, name := range []string{"orchestrator", "compactor"} {
		for k, v := range load(t).Services[name].Environment {
			if slices.Contains(keys, k) && v != nil && *v != "" {
				t.Errorf("%s: %s = %q without the host setting it", name, k, *v)
			}
		}
	}
}

// TestComposeScrapes checks that prometheus.yml scrapes every Cairn service
// on its --http port: scaled services by DNS (one target per replica), the
// others by name.
func TestComposeScrapes(t *testing.T) {
	p := load(t)
	data, err := os.ReadFile("../prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName    string `yaml:"job_name"`
			DNSSDConfs []struct {
				Names []string `yaml:"names"`
				Type  string   `yaml:"type"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
			Static []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	targets := map[string]bool{} // host:port
	dnsTargets := map[string]bool{}
	for _, sc := range cfg.ScrapeConfigs {
		for _, d := range sc.DNSSDConfs {
			for _, n := range d.Names {
				dnsTargets[fmt.Sprintf("%s:%d", n, d.Port)] = true
			}
		}
		for _, st := range sc.Static {
			for _, tg := range st.Targets {
				targets[tg] = true
			}
		}
	}
	for _, name := range cairnServices {
		s := p.Services[name]
		target := name + ":" + httpPort(s)
		scaled := s.Deploy != nil && s.Deploy.Replicas != nil && *s.Deploy.Replicas > 1
		switch {
		case scaled && !dnsTargets[target]:
			t.Errorf("%s runs %d replicas: prometheus.yml needs a dns_sd_config for %s", name, *s.Deploy.Replicas, target)
		case !scaled && !dnsTargets[target] && !targets[target]:
			t.Errorf("prometheus.yml does not scrape %s", target)
		}
	}
}

// TestComposeAdminKeyFromTheHost checks that the gateway's first admin key
// comes from a compose secret, a file of the host's (deploy/.secrets/admin.key,
// or CAIRN_ADMIN_KEY_FILE), not from the image or compose.yaml itself.
func TestComposeAdminKeyFromTheHost(t *testing.T) {
	p := load(t)
	gw := p.Services["gateway"]
	if len(gw.Secrets) != 1 || gw.Secrets[0].Source != "cairn_admin_key" {
		t.Fatalf("gateway secrets %+v, want cairn_admin_key", gw.Secrets)
	}
	if s, ok := p.Secrets["cairn_admin_key"]; !ok || !strings.HasSuffix(s.File, filepath.Join("deploy", ".secrets", "admin.key")) {
		t.Errorf("secret cairn_admin_key = %+v, want the host's file deploy/.secrets/admin.key", s)
	}
	if s := loadEnv(t, []string{"CAIRN_ADMIN_KEY_FILE=/elsewhere/key"}).Secrets["cairn_admin_key"]; s.File != "/elsewhere/key" {
		t.Errorf("CAIRN_ADMIN_KEY_FILE does not choose the file: %+v", s)
	}
	if i := slices.Index(gw.Command, "--bootstrap-admin-key-file"); i < 0 || i+1 == len(gw.Command) || gw.Command[i+1] != "/run/secrets/cairn_admin_key" {
		t.Errorf("gateway command %v, want --bootstrap-admin-key-file /run/secrets/cairn_admin_key", gw.Command)
	}
	for name, svc := range p.Services {
		if name != "gateway" && len(svc.Secrets) > 0 {
			t.Errorf("%s gets secrets %+v; only the gateway needs the admin key", name, svc.Secrets)
		}
	}
}
