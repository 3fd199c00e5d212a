//go:build cluster

package clustertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// natsNode is one nats-server process of the cluster.
type natsNode struct {
	name    string
	client  string // nats://127.0.0.1:port
	monitor string // http://127.0.0.1:port
	conf    string // its configuration file
	proc    *proc
}

// startNATSCluster starts a 3-node JetStream cluster of separate nats-server
// processes, each with its own store under dir, and waits until every node
// reports JetStream healthy.
func startNATSCluster(t *testing.T, ps *procs, bin, dir string) []*natsNode {
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
}
`, name, ports[i], ports[3+i], filepath.Join(dir, name), ports[6+i], strings.Join(routes, ", "))
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
