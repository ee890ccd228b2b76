// Package natstest runs an embedded NATS JetStream server for tests, with
// file storage in a test directory, on a fixed port once started so that
// Restart brings the same server back (same port, same store) as a real
// server's restart would. Tests only: cmd/cohort never links the server.
package natstest

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is an embedded nats-server with JetStream. Safe for concurrent
// use.
type Server struct {
	t     testing.TB
	store string
	mu    sync.Mutex
	port  int
	srv   *server.Server
}

// Start starts a server on a free loopback port, stopped when the test
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, store: t.TempDir(), port: -1}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: s.port, JetStream: true, StoreDir: s.store,
		NoLog: true, NoSigs: true, MaxPayload: 8 << 20}
	srv, err := server.NewServer(opts)
	if err != nil {
		s.t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		s.t.Fatal("natstest: nats-server did not start within 10s")
	}
	s.srv = srv
	s.port = srv.Addr().(*net.TCPAddr).Port
}

// Stop shuts the server down and waits for it.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		s.srv = nil
	}
}

// Restart stops the server and starts it again on the same port and
// store: what was stored (file storage) is still there.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start()
}

// URL is the server's client URL.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("nats://127.0.0.1:%d", s.port)
}
