package cohort

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/remote"
	"github.com/cohort-dev/cohort/settings"

	"github.com/cohort-dev/cohort/internal/safegit"
)

// RemoteConfig connects a session to remote workers over NATS JetStream:
// with the remote_agents flag on, the Agent tool's isolation: "remote"
// runs an agent as a job on a worker (cohort worker). The zero value
// means no NATS: remote agents are refused with a sentence that says so.
type RemoteConfig struct {
	// NATS is the server URL (nats://host:4222, or a comma-separated list
	// of a cluster's servers).
	NATS string
	// Prefix starts every subject and names the streams: one per tenant
	// on a shared cluster (default "cohort").
	Prefix string
	// Credentials is a NATS .creds file; TLSCA, TLSCert and TLSKey are
	// PEM files for TLS (the servers' CA; a client certificate).
	Credentials, TLSCA, TLSCert, TLSKey string
	// KeyName names the lead's signing key on the workers (default
	// "lead-" and the host name); the key is kept in
	// $COHORT_HOME/remote/lead.key.
	KeyName string
	// AckWait and MaxDeliver tune the queue (defaults 30s and 5).
	AckWait    time.Duration
	MaxDeliver int
}

func (r RemoteConfig) nats(name string) remote.Config {
	return remote.Config{URL: r.NATS, Prefix: r.Prefix, Credentials: r.Credentials,
		TLSCA: r.TLSCA, TLSCert: r.TLSCert, TLSKey: r.TLSKey, Name: name}
}

func (r RemoteConfig) queue() remote.Queue {
	return remote.Queue{AckWait: r.AckWait, MaxDeliver: r.MaxDeliver}
}

// RemoteNATS is the NATS side of cfg.Remote, for a worker.
func RemoteNATS(cfg Config) (remote.Config, remote.Queue) {
	return cfg.Remote.nats("cohort worker"), cfg.Remote.queue()
}

// LeadSigner returns the key this machine signs remote jobs with (made on
// first use, mode 0600, in $COHORT_HOME/remote/lead.key). Its PublicKey
// line is what a worker's trust file needs.
func LeadSigner(cfg Config) (*remote.Signer, error) {
	inv := cfg.invocation()
	env, err := settings.NewEnv(inv.Getenv, "/")
	if err != nil {
		return nil, err
	}
	key, err := remote.LoadOrCreateKey(filepath.Join(env.CohortHome, "remote", "lead.key"))
	if err != nil {
		return nil, err
	}
	name := cfg.Remote.KeyName
	if name == "" {
		host, _ := os.Hostname()
		name = "lead-" + sanitizeKeyName(host)
	}
	s, err := remote.NewSigner(name, key)
	if err != nil {
		return nil, configErr("Remote.KeyName", "%v", err)
	}
	return s, nil
}

// DefaultTrustFile is where a worker looks for the leads it trusts when
// --trust is not given.
func DefaultTrustFile(cfg Config) (string, error) {
	env, err := settings.NewEnv(cfg.invocation().Getenv, "/")
	if err != nil {
		return "", err
	}
	return filepath.Join(env.CohortHome, "remote", "trusted_leads"), nil
}

func sanitizeKeyName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "host"
	}
	return strings.Trim(fmt.Sprint(b.String()), ".")
}

// remoteConn is a session's connection to the remote queue, dialled at
// the first remote spawn (a session whose NATS is down still starts; its
// remote spawns say why they fail) and closed with the session.
type remoteConn struct {
	cfg    Config
	git    func() *safegit.Runner // the session's, confined by its sandbox
	mu     sync.Mutex
	client *remote.Client
}

// openRemote sets up the connection when the session has NATS and the
// remote_agents flag.
func (s *Session) openRemote() {
	if s.cfg.Remote.NATS == "" {
		return
	}
	s.remote = &remoteConn{cfg: s.cfg, git: s.git}
	s.closers = append(s.closers, s.remote.close)
}

// remoteSettings is the settings' "remote" object.
type remoteSettings struct {
	NATS        string `json:"nats"`
	Prefix      string `json:"prefix"`
	Credentials string `json:"credentials"`
	TLSCA       string `json:"tlsCA"`
	TLSCert     string `json:"tlsCert"`
	TLSKey      string `json:"tlsKey"`
	KeyName     string `json:"keyName"`
	AckWait     string `json:"ackWait"`
	MaxDeliver  int    `json:"maxDeliver"`
}

// remoteFromSettings fills what Config.Remote leaves empty from the
// "remote" objects of the user settings and --settings layers, the later
// winning. Project and local settings files are not read for it (a
// warning says so): a cloned repository must not send the session's
// code and prompts to a server of its choosing.
func (s *Session) remoteFromSettings() error {
	secs := s.settings.Section("remote")
	r := &s.cfg.Remote
	for i := len(secs) - 1; i >= 0; i-- {
		sec := secs[i]
		if sec.Source.Scope == settings.ScopeProject || sec.Source.Scope == settings.ScopeLocal {
			fmt.Fprintf(s.inv.Stderr, "cohort: warning: %s:%d: \"remote\" is read only from user settings ($COHORT_HOME/settings.json) and --settings, not from a project's files; ignored\n", sec.Source.Path, sec.Line)
			continue
		}
		var v remoteSettings
		if err := json.Unmarshal(sec.Value, &v); err != nil {
			return fmt.Errorf("%s:%d: \"remote\" must be an object {\"nats\": URL, \"prefix\", \"credentials\", \"tlsCA\", \"tlsCert\", \"tlsKey\", \"keyName\", \"ackWait\", \"maxDeliver\"}: %v", sec.Source.Path, sec.Line, err)
		}
		fill := func(dst *string, v string) {
			if *dst == "" {
				*dst = v
			}
		}
		fill(&r.NATS, v.NATS)
		fill(&r.Prefix, v.Prefix)
		fill(&r.Credentials, v.Credentials)
		fill(&r.TLSCA, v.TLSCA)
		fill(&r.TLSCert, v.TLSCert)
		fill(&r.TLSKey, v.TLSKey)
		fill(&r.KeyName, v.KeyName)
		if r.AckWait == 0 && v.AckWait != "" {
			d, err := time.ParseDuration(v.AckWait)
			if err != nil {
				return fmt.Errorf("%s:%d: remote.ackWait: %v (write a duration such as \"30s\")", sec.Source.Path, sec.Line, err)
			}
			r.AckWait = d
		}
		if r.MaxDeliver == 0 {
			r.MaxDeliver = v.MaxDeliver
		}
	}
	return nil
}

// remoteQueue is the runtime's Config.Remote: nil without NATS.
func (s *Session) remoteQueue() func(context.Context) (crew.RemoteQueue, error) {
	if s.remote == nil {
		return nil
	}
	return s.remote.get
}

func (r *remoteConn) get(ctx context.Context) (crew.RemoteQueue, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return r.client, nil
	}
	signer, err := LeadSigner(r.cfg)
	if err != nil {
		return nil, err
	}
	c, err := remote.Dial(ctx, remote.ClientConfig{Config: r.cfg.Remote.nats("cohort lead"), Queue: r.cfg.Remote.queue(), Signer: signer, Git: r.git()})
	if err != nil {
		return nil, err
	}
	r.client = c
	return c, nil
}

func (r *remoteConn) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		r.client.Close()
		r.client = nil
	}
}
