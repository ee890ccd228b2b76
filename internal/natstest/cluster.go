package natstest

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster is n embedded JetStream servers routed to each other on
// loopback: a JetStream cluster whose streams can be replicated (R3 on
// three), one of which a test can kill.
type Cluster struct {
	t     testing.TB
	mu    sync.Mutex
	nodes []*server.Server // nil once killed
	urls  []string
}

// StartCluster starts n servers named n0, n1, … in cluster "cohort-test",
// each routed to all the others, and waits (up to 30 s) until JetStream's
// meta group has a leader that sees all n. They are stopped when the test
// ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	t.Cleanup(c.Stop)
	ports := freePorts(t, n)
	routes := make([]string, n)
	for i, p := range ports {
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", p)
	}
	store := t.TempDir()
	for i := range n {
		opts := &server.Options{
			ServerName: fmt.Sprint("n", i), Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: filepath.Join(store, fmt.Sprint("n", i)),
			JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 1 << 30,
			NoLog: true, NoSigs: true, MaxPayload: 8 << 20,
			Cluster: server.ClusterOpts{Name: "cohort-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:  server.RoutesFromStr(strings.Join(append(append([]string(nil), routes[:i]...), routes[i+1:]...), ",")),
		}
		srv, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Start()
		if !srv.ReadyForConnections(10 * time.Second) {
			t.Fatalf("natstest: cluster node n%d did not start within 10s", i)
		}
		c.nodes = append(c.nodes, srv)
		c.urls = append(c.urls, fmt.Sprintf("nats://127.0.0.1:%d", srv.Addr().(*net.TCPAddr).Port))
	}
	c.waitFor(func() bool {
		for _, s := range c.nodes {
			if s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == n {
				return true
			}
		}
		return false
	}, "a JetStream meta leader that sees every node")
	return c
}

// freePorts finds n free loopback ports for the cluster's routes, which
// each node must know before any starts.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// waitFor polls cond (every 20 ms, up to 30 s); the test fails naming
// what it waited for.
func (c *Cluster) waitFor(cond func() bool, what string) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("natstest: waited 30s for %s", what)
		}
		<-tick.C
	}
}

// URL is the client URL of every node, comma-separated, as a client (or a
// team file's "nats") names a cluster: the client fails over between them.
func (c *Cluster) URL() string { return strings.Join(c.urls, ",") }

// NodeURL is node i's client URL.
func (c *Cluster) NodeURL(i int) string { return c.urls[i] }

// StreamLeader returns the node leading stream (in the global account),
// or -1 when none does now.
func (c *Cluster) StreamLeader(stream string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.nodes {
		if s != nil && s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return i
		}
	}
	return -1
}

// Kill stops node i at once: its clients lose their connection and the
// others must elect new leaders for what it led.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	s := c.nodes[i]
	c.nodes[i] = nil
	c.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// Stop shuts every node down and waits for them.
func (c *Cluster) Stop() {
	for i := range c.nodes {
		c.Kill(i)
	}
}
