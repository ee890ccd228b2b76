// Package cost measures what a workload is billed for its input: it runs
// a bench/scenario workload in-process on a cohort.Session against
// llm/fakeapi with its prompt-cache simulator on, and adds up the usage the
// fake reported — uncached input, cache writes and cache reads — weighed as
// the API bills them (a write 1.25 input tokens, a read 0.1), in
// input-token-equivalents and in dollars at Sonnet's list price.
//
// The figures are the fake's accounting of the requests Cohort really
// sent, not estimates: bench/cmd/costs prints them for BENCHMARKS.md, and
// the tests here check the properties a change must keep (a fan-out's
// shared prefix written once).
package cost

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/bench/scenario"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Weights of cache writes and reads relative to an input token (the 5-minute
// cache), and Sonnet's list price of an input token.
const (
	WriteWeight      = 1.25
	ReadWeight       = 0.1
	InputUSDPerToken = 3.0 / 1_000_000
)

// FirstToken is the fake's first-token latency in a measured run. A real
// API takes a second or more before a response begins, and only then can
// another request read what it wrote to the cache; a fake that answers at
// once would hide every race for the cache.
const FirstToken = 250 * time.Millisecond

// Workload is a named run to bill: a bench/scenario spec, or (Custom) a
// lead prompt with its own policy.
type Workload struct {
	Name string
	Spec scenario.Spec
	// Custom, when set, is used instead of Spec.
	Custom *Custom
	// Deny are tools taken out of every agent's array (deny rules that
	// name a whole tool): what a bill would be without them.
	Deny []string
}

// Workloads are the ones the cost table reports: the fan-out of issue 4,
// issue 25's five background agents, five forks and a team of three.
var Workloads = []Workload{
	{Name: "fanout-10x5", Spec: scenario.Spec{Agents: 10, Turns: 5, Tools: scenario.ToolsBash}},
	{Name: "background-5x2", Spec: scenario.Spec{Agents: 5, Turns: 2, Tools: scenario.ToolsBash, Background: true}},
	{Name: Customs[0].Name, Custom: &Customs[0]},
	{Name: Customs[1].Name, Custom: &Customs[1]},
}

// agents is how many agents the workload starts below its lead.
func (w Workload) agents() int {
	if w.Custom != nil {
		return w.Custom.Agents
	}
	return w.Spec.Agents
}

// Bill is what one run was billed for its input.
type Bill struct {
	Requests int
	// Input, Written and Read are the usage the fake reported, summed:
	// uncached input tokens, cache-creation tokens, cache-read tokens.
	Input, Written, Read int64
	// Writes counts the requests that wrote to the cache.
	Writes int
	Output int64
}

// Equivalents is the bill in input-token-equivalents.
func (b Bill) Equivalents() float64 {
	return float64(b.Input) + WriteWeight*float64(b.Written) + ReadWeight*float64(b.Read)
}

// USD is the bill in dollars at the list price.
func (b Bill) USD() float64 { return b.Equivalents() * InputUSDPerToken }

// Run runs w once in a fresh project under dir and returns its bill and
// the fake's requests.
func Run(ctx context.Context, dir string, w Workload) (Bill, []fakeapi.Recorded, error) {
	return RunClient(ctx, dir, w, "")
}

// RunClient is Run with the lead prompt given to another client's command
// line (client, a path: Claude Code's claude.exe, or a built cohort)
// instead of an in-process session; "" is Run. Workloads with a Custom
// policy set cohort-only flags and run in-process only.
func RunClient(ctx context.Context, dir string, w Workload, client string) (Bill, []fakeapi.Recorded, error) {
	if client != "" && w.Custom != nil {
		return Bill{}, nil, fmt.Errorf("%s: runs in-process only (its flags are cohort's)", w.Name)
	}
	var (
		policy fakeapi.Policy
		check  func() error
		prompt = w.Spec.Prompt()
	)
	if c := w.Custom; c != nil {
		policy, check = c.Policy()
		prompt = c.Prompt
	} else {
		if err := w.Spec.Validate(); err != nil {
			return Bill{}, nil, err
		}
		pol := scenario.NewPolicy()
		policy, check = pol.Reply, func() error {
			sum := pol.Summary()
			if client != "" && !w.Spec.Background {
				// Claude Code tells its lead of a foreground agent's end in
				// a task notification too; the work checked is the same.
				sum.Notified = 0
			}
			return w.Spec.Check(sum, 0)
		}
	}
	srv := fakeapi.New(fakeapi.Config{Policy: func(r *fakeapi.Request) fakeapi.Reply {
		reply := policy(r)
		reply.FirstTokenDelay = FirstToken
		return reply
	}})
	defer srv.Close()
	project, home := filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, d := range []string{project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Bill{}, nil, err
		}
	}
	env := map[string]string{"HOME": home, "COHORT_HOME": filepath.Join(home, ".cohort"), "PATH": os.Getenv("PATH"),
		"TMPDIR": os.TempDir(), "COHORT_NOTIFY_COALESCE": "0"}
	if c := w.Custom; c != nil && c.TeammateBin != "" {
		// Teammates in panes reach the fake through their environment, and
		// the private tmux server's socket path must fit in 107 bytes.
		short, err := os.MkdirTemp("", "ct")
		if err != nil {
			return Bill{}, nil, err
		}
		defer os.RemoveAll(short)
		env["COHORT_HOME"], env["COHORT_TEAMMATE_BIN"] = short, c.TeammateBin
		env["ANTHROPIC_BASE_URL"], env["ANTHROPIC_API_KEY"] = srv.URL, "bench"
	}
	var failed string
	if client != "" {
		failed = runClient(ctx, client, prompt, project, home, srv.URL)
	} else {
		failed = runSession(ctx, w, prompt, project, env, srv.URL)
	}
	if failed != "" {
		return Bill{}, nil, fmt.Errorf("%s: the run failed: %s", w.Name, failed)
	}
	if err := check(); err != nil {
		return Bill{}, nil, fmt.Errorf("%s: %v", w.Name, err)
	}
	recs := srv.Requests()
	return billOf(recs), recs, nil
}

// billOf adds up the usage of the requests the fake answered.
func billOf(recs []fakeapi.Recorded) Bill {
	var b Bill
	for _, r := range recs {
		if r.Path != "/v1/messages" || r.Status != 200 {
			continue
		}
		b.Requests++
		b.Input += int64(r.Usage.InputTokens)
		b.Written += int64(r.Usage.CacheCreationInputTokens)
		b.Read += int64(r.Usage.CacheReadInputTokens)
		b.Output += int64(r.Usage.OutputTokens)
		if r.Usage.CacheCreationInputTokens > 0 {
			b.Writes++
		}
	}
	return b
}

// SubagentFirstRequests returns the recorded first requests of the
// workload's subagents (turn 0, not the lead's).
func SubagentFirstRequests(recs []fakeapi.Recorded) []fakeapi.Recorded {
	var out []fakeapi.Recorded
	for _, r := range recs {
		if r.Request == nil || r.Request.Turn() != 0 || strings.Contains(r.Request.FirstUserText(), "bench-lead") ||
			strings.Contains(r.Request.FirstUserText(), "cost-") {
			continue
		}
		out = append(out, r)
	}
	return out
}

// runSession runs the workload's lead prompt in-process on a cohort.Session
// and returns what failed ("" when nothing did).
func runSession(ctx context.Context, w Workload, prompt, project string, env map[string]string, url string) string {
	cfg := cohort.Config{Dir: project, Home: env["COHORT_HOME"], BaseURL: url, APIKey: "bench",
		AllowedTools: []string{"Bash"}, DisallowedTools: w.Deny, StopAfterRun: true, Stderr: io.Discard,
		Getenv: func(k string) string { return env[k] }, Environ: func() []string {
			var out []string
			for k, v := range env {
				out = append(out, k+"="+v)
			}
			return out
		}}
	if c := w.Custom; c != nil {
		cfg.Flags, cfg.TeammateMode = c.Flags, c.TeammateMode
	}
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		return err.Error()
	}
	var failed string
	for ev, err := range s.Run(ctx, prompt) {
		if err != nil {
			failed = err.Error()
			break
		}
		if ev.Type == cohort.EventResult && ev.IsError {
			failed = ev.Result
		}
	}
	if err := s.Close(); err != nil && failed == "" {
		failed = err.Error()
	}
	return failed
}

// runClient runs the lead prompt with another client's command line, the
// one Claude Code and cohort share (-p PROMPT --output-format json
// --allowedTools Bash), in the project with a home of its own, against
// the fake; it returns what failed ("" when nothing did). Claude Code is
// told to send nothing but the model's requests.
func runClient(ctx context.Context, client, prompt, project, home, url string) string {
	cmd := exec.CommandContext(ctx, client, "-p", prompt, "--output-format", "json", "--allowedTools", "Bash")
	cmd.Dir = project
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir(),
		"COHORT_HOME=" + filepath.Join(home, ".cohort"), "ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=bench",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
	cmd.Stdin = strings.NewReader("")
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s: %v: %s", client, err, out)
	}
	return ""
}
