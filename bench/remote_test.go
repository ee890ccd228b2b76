package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/cli"
	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/remote"
)

// remoteBench is a lead's repository and home, a zero-latency fake model,
// an embedded NATS server and worker processes of the cohort binary.
type remoteBench struct {
	b       *testing.B
	project string
	vars    map[string]string
	nats    *natstest.Server
	fake    *fakeapi.Server
	trust   string
	// workers is the lead's trusted_workers file: each worker started
	// adds the key line it prints.
	workers string
}

var benchTask = regexp.MustCompile(`bench task (\d+)`)
var benchCwd = regexp.MustCompile(`Working directory: (\S+)`)

// benchPolicy: an agent writes one file and reports (two model calls);
// the lead sends one agent (remote or local background) and acknowledges
// its notification.
func benchPolicy(r *fakeapi.Request) fakeapi.Reply {
	first := r.FirstUserText()
	if m := benchTask.FindStringSubmatch(first); m != nil {
		if r.Turn() == 0 {
			cwd := ""
			if c := benchCwd.FindStringSubmatch(r.SystemText()); c != nil {
				cwd = c[1]
			}
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "Write", map[string]any{
				"file_path": filepath.Join(cwd, "out-"+m[1]+".txt"), "content": "x\n"})}}
		}
		return fakeapi.TextReply("done")
	}
	if r.Turn() == 0 {
		in := map[string]any{"description": "bench job", "prompt": "bench task 0: write a file"}
		if strings.Contains(first, "remote") {
			in["isolation"] = "remote"
		} else {
			in["run_in_background"] = true
		}
		return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "Agent", in)}}
	}
	return fakeapi.TextReply("noted")
}

func newRemoteBench(b *testing.B) *remoteBench {
	b.Helper()
	root := b.TempDir()
	rb := &remoteBench{b: b, project: filepath.Join(root, "project"), nats: natstest.Start(b),
		fake: fakeapi.New(fakeapi.Config{Policy: benchPolicy})}
	b.Cleanup(rb.fake.Close)
	home := filepath.Join(root, "home")
	rb.vars = map[string]string{"HOME": home, "COHORT_HOME": filepath.Join(home, ".cohort"), "PATH": os.Getenv("PATH"),
		"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": rb.fake.URL, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@example.com",
		"GIT_COMMITTER_NAME": "B", "GIT_COMMITTER_EMAIL": "b@example.com"}
	if err := os.MkdirAll(rb.project, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = rb.project, rb.environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	signer, err := cohort.LeadSigner(cohort.Config{Getenv: func(k string) string { return rb.vars[k] }})
	if err != nil {
		b.Fatal(err)
	}
	rb.trust = filepath.Join(root, "trusted_leads")
	rb.workers = filepath.Join(root, "trusted_workers")
	if err := os.WriteFile(rb.trust, []byte(signer.PublicKey()+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return rb
}

func (rb *remoteBench) environ() []string {
	var out []string
	for k, v := range rb.vars {
		out = append(out, k+"="+v)
	}
	return out
}

// startWorkers starts n cohort worker processes, each with its own home
// and empty directory, and stops them (SIGTERM, reaped) when the
// benchmark ends.
func (rb *remoteBench) startWorkers(n, concurrency int) {
	rb.b.Helper()
	bin := binaries(rb.b).Cohort
	for i := range n {
		dir := rb.b.TempDir()
		cmd := exec.Command(bin, "worker", "--nats", rb.nats.URL(), "--trust", rb.trust, "--allow-model", "*",
			"--concurrency", fmt.Sprint(concurrency), "--name", fmt.Sprintf("w%d", i))
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "COHORT_HOME=" + filepath.Join(dir, ".cohort"), "PATH=" + os.Getenv("PATH"),
			"ANTHROPIC_API_KEY=bench", "ANTHROPIC_BASE_URL=" + rb.fake.URL, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}
		out, err := cmd.StdoutPipe()
		if err != nil {
			rb.b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			rb.b.Fatal(err)
		}
		ready, exited := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(exited)
			sc := bufio.NewScanner(out)
			var once sync.Once
			for sc.Scan() {
				once.Do(func() {
					if line, ok := strings.CutPrefix(sc.Text(), "cohort worker: results signed as "); ok {
						f := strings.Fields(line)
						appendLine(rb.b, rb.workers, f[0]+" "+f[1])
					}
					close(ready)
				})
			}
			_ = cmd.Wait()
		}()
		select {
		case <-ready:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			rb.b.Fatal("a worker did not start")
		}
		rb.b.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
}

// BenchmarkRemoteThroughput: jobs a second through the queue, with a
// zero-latency fake model, on 1 and 3 worker processes (4 jobs at a time
// each). A job is what a remote agent costs a worker: a signed job opened
// and capped, a clone of the bundle, a Session whose agent writes a file
// in two model calls, the patch, the result stored and acknowledged. The
// lead submits 24 jobs per iteration through remote.Client and waits for
// every result.
//
//	go test -run '^$' -bench RemoteThroughput -benchtime 3x ./bench/
func BenchmarkRemoteThroughput(b *testing.B) {
	for _, workers := range []int{1, 3} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			const jobs = 24
			rb := newRemoteBench(b)
			rb.startWorkers(workers, 4)
			signer, err := cohort.LeadSigner(cohort.Config{Getenv: func(k string) string { return rb.vars[k] }})
			if err != nil {
				b.Fatal(err)
			}
			trusted, err := remote.NewTrustFile(rb.workers)
			if err != nil {
				b.Fatal(err)
			}
			c, err := remote.Dial(b.Context(), remote.ClientConfig{Config: remote.Config{URL: rb.nats.URL()}, Signer: signer, Workers: trusted})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			var total time.Duration
			iter := 0
			for b.Loop() {
				iter++
				start := time.Now()
				var wg sync.WaitGroup
				for i := range jobs {
					id := fmt.Sprintf("b%d-%d-%d", workers, iter, i)
					j := &remote.Job{ID: id, Description: "bench", Prompt: fmt.Sprintf("bench task %d: write a file", i),
						Definition: remote.Definition{Name: "general-purpose", Prompt: "You write files."},
						Settings:   remote.Settings{Mode: "acceptEdits"}}
					if err := c.Submit(b.Context(), j, rb.project, "HEAD"); err != nil {
						b.Fatal(err)
					}
					wg.Go(func() {
						ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
						defer cancel()
						res, err := c.Wait(ctx, id, nil)
						if err != nil || res.Status != remote.StatusCompleted {
							b.Errorf("job %s: %v %+v", id, err, res)
						}
					})
				}
				wg.Wait()
				total += time.Since(start)
			}
			b.ReportMetric(float64(jobs*iter)/total.Seconds(), "jobs/s")
		})
	}
}

// BenchmarkRemoteLatency: one lead run (cohort -p through cli.Main) whose
// single agent writes a file, as a local background agent and as a
// remote agent on one idle worker; the difference per op is the latency a
// remote job adds: the bundle and its upload, the queue, the worker's
// clone and Session start, the patch and its application to a kept
// worktree (and the lead's first connection to NATS, paid once per
// session).
//
//	go test -run '^$' -bench RemoteLatency -benchtime 10x ./bench/
func BenchmarkRemoteLatency(b *testing.B) {
	for _, kind := range []string{"local", "remote"} {
		b.Run(kind, func(b *testing.B) {
			rb := newRemoteBench(b)
			if kind == "remote" {
				rb.startWorkers(1, 1)
			}
			runs := 0
			for b.Loop() {
				runs++
				args := []string{"--cwd", rb.project, "-p", "send one " + kind + " agent", "--permission-mode", "acceptEdits",
					"--nats", rb.nats.URL(), "--flag", "remote_agents=on"}
				var stdout, stderr bytes.Buffer
				ctx, cancel := context.WithTimeout(b.Context(), 2*time.Minute)
				code := cli.Main(ctx, cli.Invocation{Args: args, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
					Getenv: func(k string) string { return rb.vars[k] }, Environ: rb.environ,
					Getwd: func() (string, error) { return rb.project, nil }})
				cancel()
				if code != 0 {
					b.Fatalf("exit %d: %s", code, stderr.String())
				}
			}
			if kind == "remote" { // each run's agent came back as a branch
				cmd := exec.Command("git", "branch", "--list", "--format=%(refname:short)", "cohort/remote-*")
				cmd.Dir, cmd.Env = rb.project, rb.environ()
				out, _ := cmd.Output()
				if n := len(strings.Fields(string(out))); n != runs {
					b.Fatalf("%d remote branches after %d runs:\n%s", n, runs, out)
				}
			}
		})
	}
}

// appendLine adds line to the file at path.
func appendLine(b *testing.B, path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		b.Error(err)
	}
}
