package natstest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is a JetStream cluster of embedded servers in one process, on
// loopback, with explicit client and route ports so that a node killed with
// [Cluster.Kill] comes back at the same address with [Cluster.Restart].
type Cluster struct {
	t    testing.TB
	opts []*server.Options

	mu struct {
		sync.Mutex
		servers []*server.Server // nil while a node is down
	}
}

// RunCluster starts an n-node JetStream cluster (n >= 2; 3 for R3 streams),
// waits until it has a meta leader, and shuts every node down when t ends.
func RunCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	if n < 2 {
		t.Fatalf("natstest: a cluster needs at least 2 nodes, got %d", n)
	}
	ports := freePorts(t, 2*n)
	routes := make([]string, n)
	for i := range n {
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", ports[n+i])
	}
	c := &Cluster{t: t}
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprintf("node%d", i),
			Host:       "127.0.0.1",
			Port:       ports[i],
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoSigs:     true,
			NoLog:      true,
			Cluster: server.ClusterOpts{
				Name: "cairn-test",
				Host: "127.0.0.1",
				Port: ports[n+i],
			},
			Routes: server.RoutesFromStr(strings.Join(routes, ",")),
		}
		for _, opt := range opts {
			opt(o)
		}
		c.opts = append(c.opts, o)
	}
	c.mu.servers = make([]*server.Server, n)
	for i := range n {
		c.start(i)
	}
	t.Cleanup(func() {
		for i := range n {
			c.Kill(i)
		}
	})
	c.WaitReady()
	return c
}

// freePorts reserves n distinct loopback ports by listening on port 0. The
// ports are released before the servers bind them; a collision with another
// program in between is possible but rare.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	ls := make([]net.Listener, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("natstest: reserve a port: %v", err)
		}
		ls[i] = l
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	for _, l := range ls {
		if err := l.Close(); err != nil {
			t.Fatalf("natstest: free a reserved port: %v", err)
		}
	}
	return ports
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	o := *c.opts[i]
	s, err := server.NewServer(&o)
	if err != nil {
		c.t.Fatalf("natstest: new server %s: %v", o.ServerName, err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		c.t.Fatalf("natstest: %s not ready within 10s", o.ServerName)
	}
	c.mu.Lock()
	c.mu.servers[i] = s
	c.mu.Unlock()
}

// Server returns node i, or nil while it is down.
func (c *Cluster) Server(i int) *server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.servers[i]
}

// Size is the number of nodes, up or down.
func (c *Cluster) Size() int { return len(c.opts) }

// URLs returns every node's client URL, comma separated, for nats.Connect:
// a client reconnects to another node when its own is killed.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.opts))
	for i, o := range c.opts {
		urls[i] = fmt.Sprintf("nats://127.0.0.1:%d", o.Port)
	}
	return strings.Join(urls, ",")
}

// Kill shuts node i down and waits until it is gone. Its store stays, so
// Restart brings it back with its data. Killing a node that is down is a
// no-op.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	s := c.mu.servers[i]
	c.mu.servers[i] = nil
	c.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// Restart starts node i again with its store and ports, and waits until the
// cluster is ready.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Server(i) != nil {
		c.t.Fatalf("natstest: node %d is already running", i)
	}
	c.start(i)
	c.WaitReady()
}

// StreamLeader returns the index of the node leading stream (in the global
// account), or -1 if no running node does.
func (c *Cluster) StreamLeader(stream string) int {
	for i := range c.opts {
		if s := c.Server(i); s != nil && s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return i
		}
	}
	return -1
}

// WaitReady waits up to 20s until every running node is routed to the other
// running nodes and the JetStream meta group has a leader every node follows.
func (c *Cluster) WaitReady() {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c.ready() {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatal("natstest: cluster not ready within 20s")
		}
		time.Sleep(20 * time.Millisecond) // polling, not synchronisation by sleep
	}
}

func (c *Cluster) ready() bool {
	var up []*server.Server
	for i := range c.opts {
		if s := c.Server(i); s != nil {
			up = append(up, s)
		}
	}
	leaders := 0
	for _, s := range up {
		if s.NumRoutes() < len(up)-1 || !s.JetStreamIsCurrent() {
			return false
		}
		if s.JetStreamIsLeader() {
			leaders++
		}
	}
	return leaders == 1
}

// Connect opens a client connection that knows every node, closed when the
// test ends. It reconnects forever, so it survives killed nodes.
func (c *Cluster) Connect(opts ...nats.Option) *nats.Conn {
	c.t.Helper()
	opts = append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(50 * time.Millisecond)}, opts...)
	nc, err := nats.Connect(c.URLs(), opts...)
	if err != nil {
		c.t.Fatalf("natstest: connect to cluster: %v", err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

// JetStream returns a JetStream context over a new connection to the cluster.
func (c *Cluster) JetStream() (*nats.Conn, jetstream.JetStream) {
	c.t.Helper()
	nc := c.Connect()
	js, err := jetstream.New(nc)
	if err != nil {
		c.t.Fatalf("natstest: jetstream: %v", err)
	}
	return nc, js
}
