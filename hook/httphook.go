package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/childenv"
	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/internal/proc"
)

// httpClient posts http hooks' inputs. It follows no redirect: the input
// goes to the URL the settings name and nowhere else (a 3xx answer is a
// failed hook).
var httpClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// envRef is a $VAR or ${VAR} reference in a header value.
var envRef = lazyre.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// runHTTP runs an http hook as run runs a command: the input is POSTed to
// c.URL as JSON; a 2xx answer's body is the command's stdout (exit 0);
// any other status, a redirect, a timeout or a failed connection is a
// failed hook (exit 1, or -1 when it timed out), which does not block.
func (r *Runner) runHTTP(ctx context.Context, c *Command, stdin []byte, timeout time.Duration) ran {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := r.cfg.Now()
	res := ran{cmd: c}
	defer func() { res.dur = r.cfg.Now().Sub(start) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(stdin))
	if err != nil {
		res.exit.Code, res.stderr = 1, fmt.Sprintf("the http hook's request could not be made: %v", err)
		return res
	}
	for k, v := range c.Headers {
		req.Header.Set(k, r.interpolate(v, c.AllowedEnvVars))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		res.exit.Code, res.stderr = 1, fmt.Sprintf("POST %s failed: %v", c.URL, err)
		if ctx.Err() != nil {
			res.exit.Code, res.exit.Stopped = -1, proc.ErrTimeout
		}
		return res
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, stdoutLimit+1))
	res.stdoutCut = len(body) > stdoutLimit
	if err != nil && !errors.Is(err, io.EOF) {
		res.exit.Code, res.stderr = 1, fmt.Sprintf("reading the answer of POST %s failed: %v", c.URL, err)
		return res
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		res.exit.Code = 1
		res.stderr = fmt.Sprintf("POST %s answered %s: %s", c.URL, resp.Status, strings.TrimSpace(string(body[:min(len(body), stderrLimit)])))
		return res
	}
	res.stdout = string(body[:min(len(body), stdoutLimit)])
	return res
}

// interpolate replaces the $VAR and ${VAR} references in v whose names
// allowed lists, from the hooks' environment (Config.Env less Cohort's
// credentials, plus Config.ExtraEnv); other references become empty. A
// credential Cohort holds is never sent, even when listed: the hooks'
// environment does not have it.
func (r *Runner) interpolate(v string, allowed []string) string {
	return envRef.ReplaceAllStringFunc(v, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		name := m[1] + m[2]
		if !slices.Contains(allowed, name) || childenv.Credential(name) {
			return ""
		}
		return r.getenv(name)
	})
}

// getenv looks name up in the hooks' environment (the last entry wins, as
// in a process's environment).
func (r *Runner) getenv(name string) string {
	val := ""
	for _, kv := range r.env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			val = v
		}
	}
	return val
}
