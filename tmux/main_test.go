package tmux

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if socket := os.Getenv(starterEnv); socket != "" {
		starterMain(socket) // TestServerDiesWithItsStarter's child; never returns
	}
	goleak.VerifyTestMain(m)
}

// fastGrace keeps the SIGTERM → SIGKILL steps short in tests.
const fastGrace = 200 * time.Millisecond

// testCtx bounds a test: nothing here should come near it.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// testEnv is the environment of a test server: ours with HOME pointing at
// an empty directory, so no rc file of the developer's runs in a pane.
func testEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{"HOME=" + home, "SHELL=/bin/sh", "LANG=C.UTF-8"}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "PATH" || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	return env
}

// startServer starts a private server for one test and closes it after.
// It skips the test only when tmux is not installed.
func startServer(t *testing.T) *Server {
	t.Helper()
	ctx := testCtx(t)
	if _, err := Available(ctx); errors.Is(err, ErrNotInstalled) {
		t.Skipf("tmux is not installed (%v); these tests need tmux 2.0 or newer", err)
	} else if err != nil {
		t.Fatal(err)
	}
	s, err := StartServer(ctx, ServerConfig{Socket: filepath.Join(t.TempDir(), "tmux.sock"), Env: testEnv(t), Grace: fastGrace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// eventually polls cond until it holds, failing the test when ctx ends.
func eventually(t *testing.T, ctx context.Context, what string, cond func() (bool, error)) {
	t.Helper()
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: never happened: %v", what, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// waitOutput waits until pane id shows want and returns the screen.
func waitOutput(t *testing.T, ctx context.Context, s *Server, id, want string) string {
	t.Helper()
	var screen string
	eventually(t, ctx, "pane "+id+" shows "+want, func() (bool, error) {
		var err error
		screen, err = s.Capture(ctx, id, 100)
		return strings.Contains(screen, want), err
	})
	return screen
}
