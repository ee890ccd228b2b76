package remote

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// natsServer is an embedded JetStream server with file storage in a test
// directory; restart brings it back on the same port and store.
type natsServer struct {
	t     *testing.T
	store string
	port  int
	srv   *server.Server
}

func startNATS(t *testing.T) *natsServer {
	t.Helper()
	n := &natsServer{t: t, store: t.TempDir(), port: -1}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	n.t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.store,
		NoLog: true, NoSigs: true, MaxPayload: 8 << 20}
	srv, err := server.NewServer(opts)
	if err != nil {
		n.t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("nats-server did not start")
	}
	n.srv = srv
	n.port = srv.Addr().(*net.TCPAddr).Port
}

func (n *natsServer) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

func (n *natsServer) restart() {
	n.t.Helper()
	n.stop()
	n.start()
}

func (n *natsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }
