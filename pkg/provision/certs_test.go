package provision_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// tlsServer runs a NATS server that serves the certificates in dir and
// requires TLS of every client.
func tlsServer(t *testing.T, dir string) *server.Server {
	t.Helper()
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: filepath.Join(dir, provision.ServerFile),
		KeyFile: filepath.Join(dir, provision.ServerKeyFile), CaFile: filepath.Join(dir, provision.ServerCAFile)})
	if err != nil {
		t.Fatalf("the server cannot load the certificates: %v", err)
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true,
		TLSConfig: tc, TLS: true, TLSVerify: false})
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

func TestWriteCertsServesVerifiedTLS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	if err := provision.WriteCerts(dir, provision.CertOptions{Hosts: []string{"nats-0", "localhost", "127.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{provision.CAKeyFile: 0o600, provision.ServerKeyFile: 0o600,
		provision.CAFile: 0o644, provision.ServerFile: 0o644, provision.ServerCAFile: 0o644, "ca-key": 0o700, "server": 0o700} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want mode %04o", name, fi, err, want)
		}
	}
	s := tlsServer(t, dir)
	url := strings.Replace(s.ClientURL(), "nats://", "tls://", 1)
	nc, err := nats.Connect(url, nats.RootCAs(filepath.Join(dir, provision.CAFile)))
	if err != nil {
		t.Fatalf("a client trusting the CA: %v", err)
	}
	nc.Close()
	// A client that does not trust the CA refuses the server.
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("a client without the CA accepted the server's certificate")
	}
	// Renewed: the CA stays, so clients keep trusting the new certificate.
	ca, _ := os.ReadFile(filepath.Join(dir, provision.CAFile))
	if err := provision.WriteCerts(dir, provision.CertOptions{Hosts: []string{"127.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, provision.CAFile)); string(again) != string(ca) {
		t.Fatal("renewing the server certificate replaced the CA")
	}
	s2 := tlsServer(t, dir)
	nc, err = nats.Connect(strings.Replace(s2.ClientURL(), "nats://", "tls://", 1), nats.RootCAs(filepath.Join(dir, provision.CAFile)))
	if err != nil {
		t.Fatalf("the renewed certificate: %v", err)
	}
	nc.Close()
	if err := provision.WriteCerts(t.TempDir(), provision.CertOptions{}); err == nil || !strings.Contains(err.Error(), "hosts") {
		t.Fatalf("no hosts: %v", err)
	}
}
