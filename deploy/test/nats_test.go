package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
)

// natsUsers is the NATS user each Cairn service of compose.yaml connects as.
var natsUsers = map[string]string{"provision": "admin", "orchestrator": "orchestrator", "compactor": "compactor",
	"toolrunner": "toolrunner-default", "projector": "projector", "gateway": "gateway"}

// TestComposeSecuresNATS checks that the cluster requires TLS and the users
// made by cairn itself, and that each service sees its own seed and the CA
// certificate only: not another service's seed, the server key or the CA key.
func TestComposeSecuresNATS(t *testing.T) {
	p := load(t)
	users := strings.Join(p.Services["nats-users"].Command, " ")
	if !strings.HasPrefix(users, "provision users --out /secrets/creds --per-user") {
		t.Errorf("nats-users: %q", users)
	}
	if certs := strings.Join(p.Services["nats-certs"].Command, " "); !strings.HasPrefix(certs, "provision certs --out /secrets/tls --hosts nats1,nats2,nats3") {
		t.Errorf("nats-certs: %q", certs)
	}
	conf, err := os.ReadFile("../nats.conf")
	if err != nil {
		t.Fatal(err)
	}
	c := string(conf)
	for _, want := range []string{`cert_file: "/secrets/tls/server/server.pem"`, `key_file: "/secrets/tls/server/server-key.pem"`,
		`ca_file: "/secrets/tls/server/ca.pem"`, "verify: true"} {
		if !strings.Contains(c, want) {
			t.Errorf("nats.conf lacks %s", want)
		}
	}
	if strings.Count(c, "tls {") != 2 {
		t.Error("nats.conf must have a tls block for clients and one for routes")
	}
	m := regexp.MustCompile(`(?m)^include "([^"]+)"`).FindStringSubmatch(c)
	if m == nil || filepath.Join("/etc/cairn-nats", m[1]) != "/secrets/creds/auth.conf" {
		t.Errorf("nats.conf must include /secrets/creds/auth.conf relative to /etc/cairn-nats, got %v", m)
	}
	for _, name := range []string{"nats1", "nats2", "nats3"} {
		s := p.Services[name]
		if cmd := strings.Join(s.Command, " "); !strings.HasPrefix(cmd, "-c /etc/cairn-nats/nats.conf ") {
			t.Errorf("%s: command %q does not load nats.conf", name, cmd)
		}
		if v := volumeAt(s, "/etc/cairn-nats/nats.conf"); v == nil || !v.ReadOnly {
			t.Errorf("%s: nats.conf is not mounted read-only", name)
		}
		// The server's TLS files and the users' public keys, never a seed.
		if v := volumeAt(s, "/secrets/tls/server"); v == nil || !strings.HasSuffix(v.Source, ".secrets/tls/server") || !v.ReadOnly {
			t.Errorf("%s: the server's TLS files are not mounted read-only at /secrets/tls/server: %+v", name, v)
		}
		if v := volumeAt(s, "/secrets/creds/auth.conf"); v == nil || !strings.HasSuffix(v.Source, ".secrets/creds/auth.conf") || !v.ReadOnly {
			t.Errorf("%s: auth.conf is not mounted read-only: %+v", name, v)
		}
		if len(s.Volumes) != 4 {
			t.Errorf("%s mounts %d volumes, want nats.conf, TLS, auth.conf and its store", name, len(s.Volumes))
		}
		for _, dep := range []string{"nats-users", "nats-certs"} {
			if d, ok := s.DependsOn[dep]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
				t.Errorf("%s must start after %s", name, dep)
			}
		}
	}
	for name, user := range natsUsers {
		s := p.Services[name]
		env := func(k string) string {
			if v := s.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		if got := env("CAIRN_NATS_CREDS"); got != "/run/cairn/creds/"+user+".nk" {
			t.Errorf("%s: CAIRN_NATS_CREDS = %q, want its own seed", name, got)
		}
		if got := env("CAIRN_NATS_CA"); got != "/run/cairn/ca/ca.pem" {
			t.Errorf("%s: CAIRN_NATS_CA = %q", name, got)
		}
		var seen []string
		for _, v := range s.Volumes {
			_, sub, ok := strings.Cut(v.Source, filepath.Join("deploy", ".secrets")+"/")
			if !ok {
				continue
			}
			seen = append(seen, sub)
			if !v.ReadOnly {
				t.Errorf("%s: deploy/.secrets/%s mounted writable", name, sub)
			}
		}
		if strings.Join(seen, " ") != "tls/ca creds/"+user {
			t.Errorf("%s mounts deploy/.secrets/ %v, want tls/ca and creds/%s only", name, seen, user)
		}
	}
}
