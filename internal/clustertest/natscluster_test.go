//go:build cluster

package clustertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// natsNode is one nats-server process of the cluster.
type natsNode struct {
	name    string
	client  string // nats://127.0.0.1:port
	monitor string // http://127.0.0.1:port
	conf    string // its configuration file
	proc    *proc
}

// security is what production runs NATS with: a user per service kind
// (`cairn provision users`) and TLS for clients and routes with
// certificates from `cairn provision certs`.
type security struct {
	creds string // directory of the seed files
	tls   string // directory of ca/, server/ and ca-key/
	auth  string // the authorization block
}

// newSecurity creates the users and the certificates with cairn.
func newSecurity(t *testing.T, ctx context.Context, cairn, dir string) *security {
	t.Helper()
	s := &security{creds: filepath.Join(dir, "creds"), tls: filepath.Join(dir, "tls")}
	var err error
	if s.auth, err = run(ctx, cairn, "provision", "users", "--out", s.creds, "--pools", "default"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, cairn, "provision", "certs", "--out", s.tls, "--hosts", "127.0.0.1,localhost"); err != nil {
		t.Fatal(err)
	}
	return s
}

// ca is the CA certificate clients verify the servers with.
func (s *security) ca() string { return filepath.Join(s.tls, "ca", "ca.pem") }

// flags are the command-line flags that connect as user.
func (s *security) flags(user string) []string {
	return []string{"--creds", filepath.Join(s.creds, user+".nk"), "--tls-ca", s.ca()}
}

// options connect a test client as the admin.
func (s *security) options(t *testing.T) []nats.Option {
	t.Helper()
	nk, err := nats.NkeyOptionFromSeed(filepath.Join(s.creds, "admin.nk"))
	if err != nil {
		t.Fatal(err)
	}
	return []nats.Option{nk, nats.RootCAs(s.ca())}
}

// tlsBlock is a tls block of a node's configuration; verify makes the node
// require and check the peer's certificate (routes).
func (s *security) tlsBlock(verify bool) string {
	return fmt.Sprintf("tls {\n  cert_file: %q\n  key_file: %q\n  ca_file: %q\n  verify: %t\n  timeout: 5\n}\n",
		filepath.Join(s.tls, "server", "server.pem"), filepath.Join(s.tls, "server", "server-key.pem"),
		filepath.Join(s.tls, "server", "ca.pem"), verify)
}

// refused returns the lines of the logs of ps's processes where a server
// refused a permission or a client was told so.
func refused(ps *procs) []string {
	ps.mu.Lock()
	all := append([]*proc(nil), ps.all...)
	ps.mu.Unlock()
	var out []string
	for _, p := range all {
		data, _ := os.ReadFile(p.log)
		for l := range strings.Lines(string(data)) {
			if strings.Contains(l, "Publish Violation") || strings.Contains(l, "Subscription Violation") ||
				strings.Contains(strings.ToLower(l), "permissions violation") {
				out = append(out, p.name+": "+strings.TrimSpace(l))
			}
		}
	}
	return out
}

// startNATSCluster starts a 3-node JetStream cluster of separate nats-server
// processes, each with its own store under dir, requiring sec's users and
// TLS of clients and routes, and waits until every node reports JetStream
// healthy.
func startNATSCluster(t *testing.T, ps *procs, bin, dir string, sec *security) []*natsNode {
	t.Helper()
	ports := freePorts(t, 9)
	var routes []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[6+i]))
	}
	nodes := make([]*natsNode, 3)
	for i := range 3 {
		name := fmt.Sprintf("n%d", i+1)
		conf := fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
http: 127.0.0.1:%d
jetstream {
  store_dir: %q
  max_memory_store: 256MB
  max_file_store: 2GB
}
cluster {
  name: cairn
  listen: 127.0.0.1:%d
  routes: [%s]
  %s
}
%s
%s
`, name, ports[i], ports[3+i], filepath.Join(dir, name), ports[6+i], strings.Join(routes, ", "),
			sec.tlsBlock(true), sec.tlsBlock(false), sec.auth)
		path := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		nodes[i] = &natsNode{name: name, client: fmt.Sprintf("nats://127.0.0.1:%d", ports[i]),
			monitor: fmt.Sprintf("http://127.0.0.1:%d", ports[3+i]), conf: path}
		nodes[i].proc = ps.start("nats-"+name, bin, "-c", path)
	}
	for _, n := range nodes {
		waitHTTP(t, n.proc, n.monitor+"/healthz", 60*time.Second)
	}
	return nodes
}

// urls is the comma-separated client URL list of nodes, as --nats takes it.
func urls(nodes []*natsNode) string {
	var u []string
	for _, n := range nodes {
		u = append(u, n.client)
	}
	return strings.Join(u, ",")
}
