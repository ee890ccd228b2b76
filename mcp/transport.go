package mcp

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/internal/proc"
)

// stderrKeep bounds what is kept of a stdio server's stderr for messages.
const stderrKeep = 4 << 10

// link is one connection to a server: the SDK's session and, for a stdio
// server, its process. Its process is started in its own process group and
// stopped with close-stdin → SIGTERM → SIGKILL to the group (package proc).
type link struct {
	cs *sdk.ClientSession
	// exited is closed when the process has exited (never, for HTTP);
	// exit says how, once it is closed.
	exited <-chan struct{}
	proc   *proc.Process
	stderr *proc.Capture
	// handled is closed once the server's watcher has recorded the end of
	// this link (restarting or failed), so a caller that saw it end waits
	// for the new state instead of racing it.
	handled chan struct{}
	// pipeDone is closed when the goroutine that ends the stdout pipe has
	// returned.
	pipeDone chan struct{}
}

// dial connects to spec's server and initializes the MCP session, within
// ctx (the start deadline). procCtx owns the process: the server's
// lifetime, not the dial's.
func dial(ctx, procCtx context.Context, spec Spec, o Options) (*link, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "cohort", Version: o.version()}, nil)
	switch spec.Type {
	case TypeHTTP:
		t := &sdk.StreamableClientTransport{Endpoint: spec.URL, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: headerTransport{headers: spec.Headers}}, MaxRetries: -1}
		cs, err := client.Connect(ctx, t, nil)
		if err != nil {
			return nil, err
		}
		return &link{cs: cs, handled: make(chan struct{})}, nil
	case TypeSDK:
		cs, err := client.Connect(ctx, spec.Transport, nil)
		if err != nil {
			return nil, err
		}
		return &link{cs: cs, handled: make(chan struct{})}, nil
	default:
		return dialStdio(ctx, procCtx, client, spec, o)
	}
}

func dialStdio(ctx, procCtx context.Context, client *sdk.Client, spec Spec, o Options) (*link, error) {
	pr, pw := io.Pipe()
	errs := proc.NewCapture(stderrKeep)
	env := slices.Clone(o.Env)
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		env = append(env, k+"="+spec.Env[k])
	}
	var launcher proc.Launcher
	if o.Launch != nil {
		l, extra, err := o.Launch(ctx, spec, o.Dir, env)
		if err != nil {
			pw.Close()
			return nil, fmt.Errorf("cannot start %s in the sandbox: %v; it is not started outside it", spec.Command, err)
		}
		launcher, env = l, append(env, extra...)
		if launcher != nil {
			// The launcher runs the path as given; a bare name is looked
			// up here, in the PATH the server gets, as exec would.
			path, err := lookPath(spec.Command, o.Dir, env)
			if err != nil {
				pw.Close()
				return nil, fmt.Errorf("cannot start %s: %v", spec.Command, err)
			}
			spec.Command = path
		}
	}
	p, err := proc.Start(procCtx, proc.Command{Path: spec.Command, Args: spec.Args, Dir: o.Dir, Env: env,
		StdinPipe: true, Stdout: pw, Stderr: errs, NewSession: true, Launcher: launcher})
	if err != nil {
		pw.Close()
		return nil, fmt.Errorf("cannot start %s: %v", spec.Command, err)
	}
	l := &link{exited: p.Done(), proc: p, stderr: errs, handled: make(chan struct{}), pipeDone: make(chan struct{})}
	go func() {
		// The process's stdout ends when the process (and its group) has;
		// the session's reader then sees EOF.
		defer close(l.pipeDone)
		_, _ = p.Wait()
		pw.Close()
	}()
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: pr, Writer: p.Stdin()}, nil)
	if err != nil {
		l.close()
		pr.Close()
		return l, err // closed, for its stderr
	}
	l.cs = cs
	return l, nil
}

// lookPath finds a command named without a slash in the directories of
// env's PATH (its last entry, as exec takes it; a relative one is taken
// from dir, where the server starts).
func lookPath(name, dir string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	dirs := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			dirs = v
		}
	}
	for _, d := range filepath.SplitList(dirs) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q is not found in the PATH the server gets (%s)", name, dirs)
}

// close ends the link: the process is asked to stop (its stdin closes
// first), the session is closed, and the process group is waited for.
func (l *link) close() {
	if l.proc != nil {
		l.proc.Stop()
	}
	if l.cs != nil {
		_ = l.cs.Close()
	}
	if l.proc != nil {
		_, _ = l.proc.Wait()
		<-l.pipeDone
	}
}

// exitText says how the link's process ended, with the end of its stderr.
func (l *link) exitText() string {
	if l.proc == nil {
		return "the connection ended"
	}
	ex, _ := l.proc.Wait()
	s := ex.String()
	if tail := strings.TrimSpace(l.stderr.String()); tail != "" {
		s += "; stderr: " + oneLine(tail, 400)
	}
	return s
}

// stderrTail is the end of a stdio server's stderr, for messages.
func (l *link) stderrTail() string {
	if l == nil || l.stderr == nil {
		return ""
	}
	return oneLine(strings.TrimSpace(l.stderr.String()), 400)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// headerTransport adds a server's configured headers to every request.
type headerTransport struct {
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}
