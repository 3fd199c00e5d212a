package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// serverFromConfig runs nats-server with JetStream and the authorization
// block `cairn provision users` printed, as a cluster node would.
func serverFromConfig(t *testing.T, authBlock string) *server.Server {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	body := "listen: 127.0.0.1:-1\njetstream { store_dir: " + filepath.Join(dir, "js") + " }\n" + authBlock
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("the printed block does not load: %v", err)
	}
	opts.NoSigs, opts.NoLog = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s
}

func TestProvisionUsersThenOperatorsUseCreds(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds")
	block := mustCairn(t, "provision", "users", "--out", creds, "--pools", "default,gpu")
	if !strings.HasPrefix(block, "authorization {") || strings.Count(block, "nkey:") != 8 {
		t.Fatalf("provision users printed:\n%s", block)
	}
	// Again: the same users, the same block.
	if again := mustCairn(t, "provision", "users", "--out", creds, "--pools", "default,gpu"); again != block {
		t.Fatal("a second provision users changed the keys")
	}
	for _, f := range []string{"admin", "orchestrator", "gateway", "projector", "compactor", "toolrunner-default", "toolrunner-gpu", "extension"} {
		seed, err := os.ReadFile(filepath.Join(creds, f+".nk"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(block, strings.TrimSpace(string(seed))) {
			t.Fatalf("the block shows %s's seed", f)
		}
	}
	s := serverFromConfig(t, block)
	url := s.ClientURL()
	code, _, errOut := cairn(t, "provision", "--nats", url)
	if code != 1 || !strings.Contains(errOut, "--creds") {
		t.Fatalf("provision without credentials: exit %d: %s", code, errOut)
	}
	admin := filepath.Join(creds, "admin.nk")
	if out := mustCairn(t, "provision", "--nats", url, "--creds", admin); !strings.Contains(out, "provisioned on") {
		t.Fatalf("provision as the admin: %s", out)
	}
	mustCairn(t, "audit", "verify", "--nats", url, "--creds", admin)
	t.Setenv("CAIRN_NATS_CREDS", admin)
	mustCairn(t, "provision", "--nats", url)

	if err := os.Chmod(admin, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cairn(t, "audit", "verify", "--nats", url, "--creds", admin)
	if code != 2 || !strings.Contains(errOut, "chmod 600") {
		t.Fatalf("a world-readable seed: exit %d: %s", code, errOut)
	}
	code, _, errOut = cairn(t, "log", "x", "--creds", admin)
	if code != 2 || !strings.Contains(errOut, "--creds applies with --nats only") {
		t.Fatalf("--creds without --nats: exit %d: %s", code, errOut)
	}
}

func TestProvisionCertsWritesTheTLSFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	out := mustCairn(t, "provision", "certs", "--out", dir, "--hosts", "nats-0,127.0.0.1")
	if !strings.Contains(out, "ca.pem") {
		t.Fatalf("provision certs printed %q", out)
	}
	for _, f := range []string{"ca/ca.pem", "ca-key/ca-key.pem", "server/server.pem", "server/server-key.pem", "server/ca.pem"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := cairn(t, "provision", "certs", "--out", dir); code != 2 || !strings.Contains(errOut, "--hosts is required") {
		t.Fatalf("no --hosts: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cairn(t, "provision", "certs", "--out", dir, "--hosts", "a", "--chown", "me"); code != 2 || !strings.Contains(errOut, "not UID:GID") {
		t.Fatalf("--chown me: exit %d: %s", code, errOut)
	}
	// Each service can be given its own directory only.
	creds := filepath.Join(t.TempDir(), "creds")
	mustCairn(t, "provision", "users", "--out", creds, "--per-user", "--chown", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()))
	for _, u := range []string{"admin", "toolrunner-default", "gateway"} {
		entries, err := os.ReadDir(filepath.Join(creds, u))
		if err != nil || len(entries) != 1 || entries[0].Name() != u+".nk" {
			t.Fatalf("%s/: %v %v, want its seed only", u, entries, err)
		}
	}
}
