package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cohort-dev/cohort/internal/safegit"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/remote"
	"github.com/cohort-dev/cohort/settings"
)

// Home is Cohort's home as p says it (Process.Home, else $COHORT_HOME,
// else ~/.cohort), found without reading anything else.
func Home(p *Plan) (string, error) {
	p.defaults()
	if p.Process.Home != "" {
		if !filepath.IsAbs(p.Process.Home) {
			return "", fieldErr("Home", "Config.Home %q is not an absolute path", p.Process.Home)
		}
		return filepath.Clean(p.Process.Home), nil
	}
	env, err := settings.NewEnv(p.Process.Getenv, "/")
	if err != nil {
		return "", err
	}
	return env.CohortHome, nil
}

// LeadSigner is Signer in p's home, named p.Remote.KeyName.
func LeadSigner(p *Plan) (*remote.Signer, error) {
	home, err := Home(p)
	if err != nil {
		return nil, err
	}
	return Signer(home, p.Remote.KeyName)
}

// TrustFile is where a worker looks for the leads it trusts when it is
// given no trust file.
func TrustFile(p *Plan) (string, error) {
	home, err := Home(p)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "remote", "trusted_leads"), nil
}

// WorkerNATS is the NATS side of p's remote settings, for a worker.
func WorkerNATS(p *Plan) (remote.Config, remote.Queue) {
	p.Remote.NATS.Name = "cohort worker"
	return p.Remote.NATS, p.Remote.Queue
}

// Signer returns the key this machine signs remote jobs with (made on
// first use, mode 0600, in home/remote/lead.key), named keyName on the
// workers (default "lead-" and the host name).
func Signer(home, keyName string) (*remote.Signer, error) {
	key, err := remote.LoadOrCreateKey(filepath.Join(home, "remote", "lead.key"))
	if err != nil {
		return nil, err
	}
	if keyName == "" {
		host, _ := os.Hostname()
		keyName = "lead-" + sanitizeKeyName(host)
	}
	s, err := remote.NewSigner(keyName, key)
	if err != nil {
		return nil, fieldErr("Remote.KeyName", "%v", err)
	}
	return s, nil
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
	return strings.Trim(b.String(), ".")
}

// remoteConn is a session's connection to the remote queue, dialled at
// the first remote spawn (a session whose NATS is down still starts; its
// remote spawns say why they fail) and closed with the session.
type remoteConn struct {
	plan   RemotePlan
	home   string
	git    func() *safegit.Runner // the session's, confined by its sandbox
	stderr io.Writer              // where a refused result is reported
	mu     sync.Mutex
	client *remote.Client
}

// openRemote sets up the connection when the session has NATS and the
// remote_agents flag.
func (s *Session) openRemote() {
	if s.Remote.NATS.URL == "" {
		return
	}
	s.remote = &remoteConn{plan: s.Remote, home: s.Process.Paths.CohortHome, git: s.git, stderr: s.Process.Stderr}
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

// remoteFromSettings fills what the plan's remote part leaves empty from
// the "remote" objects of the user settings and the settings layers, the
// later winning. Project and local settings files are not read for it (a
// warning says so): a cloned repository must not send the session's
// code and prompts to a server of its choosing.
func (p *Plan) remoteFromSettings() error {
	secs := p.Settings.Loaded.Section("remote")
	r := &p.Remote
	for i := len(secs) - 1; i >= 0; i-- {
		sec := secs[i]
		if sec.Source.Scope == settings.ScopeProject || sec.Source.Scope == settings.ScopeLocal {
			fmt.Fprintf(p.Process.Stderr, "cohort: warning: %s:%d: \"remote\" is read only from user settings ($COHORT_HOME/settings.json) and the session's own settings layers, not from a project's files; ignored\n", sec.Source.Path, sec.Line)
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
		fill(&r.NATS.URL, v.NATS)
		fill(&r.NATS.Prefix, v.Prefix)
		fill(&r.NATS.Credentials, v.Credentials)
		fill(&r.NATS.TLSCA, v.TLSCA)
		fill(&r.NATS.TLSCert, v.TLSCert)
		fill(&r.NATS.TLSKey, v.TLSKey)
		fill(&r.KeyName, v.KeyName)
		if r.Queue.AckWait == 0 && v.AckWait != "" {
			d, err := time.ParseDuration(v.AckWait)
			if err != nil {
				return fmt.Errorf("%s:%d: remote.ackWait: %v (write a duration such as \"30s\")", sec.Source.Path, sec.Line, err)
			}
			r.Queue.AckWait = d
		}
		if r.Queue.MaxDeliver == 0 {
			r.Queue.MaxDeliver = v.MaxDeliver
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
	signer, err := Signer(r.home, r.plan.KeyName)
	if err != nil {
		return nil, err
	}
	nats := r.plan.NATS
	nats.Name = "cohort lead"
	// The workers whose results this lead takes. Read after the dial, so
	// that an unreachable server is the error a spawn reports first.
	trusted := filepath.Join(r.home, "remote", "trusted_workers")
	workers, werr := remote.NewTrustFile(trusted)
	var keys remote.WorkerKeys = remote.NewKeyring()
	if werr == nil {
		keys = workers
	}
	c, err := remote.Dial(ctx, remote.ClientConfig{Config: nats, Queue: r.plan.Queue, Signer: signer, Workers: keys, Git: r.git(),
		Report: func(id string, err error) {
			fmt.Fprintf(r.stderr, "cohort: warning: remote job %s: a result was refused and the job is still awaited: %v\n", id, err)
		}})
	if err != nil {
		return nil, err
	}
	if werr != nil {
		c.Close()
		return nil, fmt.Errorf("remote: %w (a lead takes a job's result only when the worker that ran it signed it with a key in %s; each cohort worker prints its line when it starts, and cohort worker key, asked for the worker's key line, prints it again there)", werr, trusted)
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
