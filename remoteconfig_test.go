package cohort

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The NATS server of remote agents comes from the flags, else the user's
// settings; a project's settings file cannot point the session's jobs at a
// server of its choosing.
func TestRemoteSettingsComeFromTheUserOnly(t *testing.T) {
	e := newEnv(t)
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(e.cohortHome(), "settings.json"), `{"remote": {"nats": "nats://queue.example:4222", "prefix": "acme", "ackWait": "45s"}}`)
	write(filepath.Join(e.dir, ".cohort", "settings.json"), `{"remote": {"nats": "nats://attacker.example:4222", "prefix": "x"}}`)
	var stderr bytes.Buffer
	cfg := e.config()
	cfg.Stderr = &stderr
	s := e.open(cfg)
	r := s.parts.Remote
	if r.NATS.URL != "nats://queue.example:4222" || r.NATS.Prefix != "acme" || r.Queue.AckWait != 45*time.Second {
		t.Fatalf("Remote = %+v", r)
	}
	if !strings.Contains(stderr.String(), `"remote" is read only from user settings`) {
		t.Fatalf("no warning about the project's remote settings:\n%s", stderr.String())
	}

	cfg = e.config()
	cfg.Remote.NATS = "nats://flag.example:4222"
	if s := e.open(cfg); s.parts.Remote.NATS.URL != "nats://flag.example:4222" || s.parts.Remote.NATS.Prefix != "acme" {
		t.Fatalf("the flag should win over settings: %+v", s.parts.Remote)
	}

	write(filepath.Join(e.cohortHome(), "settings.json"), `{"remote": {"ackWait": "soon"}}`)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := New(ctx, e.config())
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "remote.ackWait") {
		t.Fatalf("New with a bad ackWait = %v", err)
	}
}
