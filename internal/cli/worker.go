package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/remote"
)

// workerOptions are cohort worker's own flags; the NATS flags (--nats,
// --nats-prefix, …) and the model flags are the root's.
type workerOptions struct {
	concurrency int
	trust       string
	dir         string
	name        string
	models      []string
	maxMode     string
	maxTurns    int
	maxBudget   float64
	wallTime    time.Duration
	tools       []string
	allow       []string
}

func newWorkerCmd(inv *Invocation, o *options) *cobra.Command {
	var w workerOptions
	cmd := &cobra.Command{
		Use:   "worker --nats URL [--concurrency N]",
		Short: "Run remote agents: pull agent jobs from NATS JetStream and run them here",
		Long: `cohort worker pulls agent jobs from a NATS JetStream work queue and runs each one
in a fresh clone of the code it carries, with this machine's model key, then
sends back the agent's final text, usage and its changes as a patch.

It runs only jobs signed by a lead it trusts: put each lead's key line (what
"cohort worker key" prints on the lead's machine) in the trust file. Its own
policy caps every job: the tools, the permission mode, turns, wall time and
models below; the Bash sandbox is always on.

It signs every result with its own key ($COHORT_HOME/remote/worker.key, made on
first use) under its --name (default worker-HOST): a lead takes only results
signed by a worker in its $COHORT_HOME/remote/trusted_workers file. Add the
line the worker prints when it starts (or "cohort worker key --worker") there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorker(cmd.Context(), inv, o, w) },
	}
	f := cmd.Flags()
	f.IntVar(&w.concurrency, "concurrency", 1, "how many jobs run at once")
	f.StringVar(&w.trust, "trust", "", "trust file: one \"name base64-key\" line per lead (default $COHORT_HOME/remote/trusted_leads)")
	f.StringVar(&w.dir, "work-dir", "", "where job clones are made (default a temporary directory)")
	f.StringVar(&w.name, "name", "", "this worker's name in results (default host-pid)")
	f.StringSliceVar(&w.models, "allow-model", nil, "a model jobs may ask for (repeatable; default --model, else sonnet)")
	f.StringVar(&w.maxMode, "max-mode", "acceptEdits", "the highest permission mode a job runs in")
	f.IntVar(&w.maxTurns, "job-max-turns", 50, "the most model calls a job may make")
	f.Float64Var(&w.maxBudget, "job-max-budget-usd", 0, "the most one job may spend on its model, in US dollars (0: only the lead's caps)")
	f.DurationVar(&w.wallTime, "wall-time", 30*time.Minute, "the longest a job may run")
	f.StringSliceVar(&w.tools, "tools", nil, "the tools a job may have (default: "+strings.Join(remote.DefaultTools, ",")+")")
	f.StringSliceVar(&w.allow, "allow", nil, "an allow rule every job gets, such as \"Bash(go test:*)\" (repeatable)")
	var asWorker bool
	key := &cobra.Command{
		Use:   "key [--worker [--name NAME]]",
		Short: "Print this machine's lead key line, for the trust files of the workers that should run its jobs (--worker: its worker key line, for the leads' trusted_workers files)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var s *remote.Signer
			var err error
			if asWorker {
				s, err = workerSigner(o.config(inv), w.name)
			} else {
				s, err = cohort.LeadSigner(o.config(inv))
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(inv.Stdout, s.PublicKey())
			return err
		},
	}
	key.Flags().BoolVar(&asWorker, "worker", false, "print this machine's worker key line instead")
	key.Flags().StringVar(&w.name, "name", "", "the worker's name (as cohort worker --name; default worker-HOST)")
	cmd.AddCommand(key)
	return cmd
}

// workerSigner is the key a worker signs its results with: made on first
// use in $COHORT_HOME/remote/worker.key, named name (default worker- and
// the host name).
func workerSigner(base cohort.Config, name string) (*remote.Signer, error) {
	trust, err := cohort.DefaultTrustFile(base)
	if err != nil {
		return nil, err
	}
	key, err := remote.LoadOrCreateKey(filepath.Join(filepath.Dir(trust), "worker.key"))
	if err != nil {
		return nil, err
	}
	if name == "" {
		host, _ := os.Hostname()
		name = "worker-" + strings.Trim(strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
				return r
			}
			return '-'
		}, host), "-")
	}
	s, err := remote.NewSigner(name, key)
	if err != nil {
		return nil, fmt.Errorf("worker --name: %w", err)
	}
	return s, nil
}

func runWorker(ctx context.Context, inv *Invocation, o *options, w workerOptions) error {
	base := o.config(inv)
	if base.Remote.NATS == "" {
		return usageErr("cohort worker needs --nats URL: the NATS server (nats://host:4222) whose queue it serves")
	}
	trust := w.trust
	if trust == "" {
		t, err := cohort.DefaultTrustFile(base)
		if err != nil {
			return err
		}
		trust = t
	}
	ring, err := remote.ReadKeyring(trust)
	if err != nil {
		return fmt.Errorf("%w (a worker runs only jobs signed by the leads in its trust file; on each lead run cohort worker key and add its line)", err)
	}
	policy := remote.Policy{Tools: w.tools, MaxMode: w.maxMode, MaxTurns: w.maxTurns, MaxBudgetUSD: w.maxBudget,
		WallTime: w.wallTime, Models: w.models, DefaultModel: o.cfg.Model, Allow: w.allow}
	if policy.DefaultModel == "" && len(w.models) > 0 {
		policy.DefaultModel = w.models[0]
	}
	signer, err := workerSigner(base, w.name)
	if err != nil {
		return err
	}
	// The workers this one trusts as a lead does, if the file is there:
	// their stored results count as "already run" for a redelivered job.
	var peers remote.WorkerKeys
	if t, err := cohort.DefaultTrustFile(base); err == nil {
		if tf, err := remote.NewTrustFile(filepath.Join(filepath.Dir(t), "trusted_workers")); err == nil {
			peers = tf
		}
	}
	nats, queue := cohort.RemoteNATS(base)
	log := slog.New(slog.NewTextHandler(inv.Stderr, nil))
	worker, err := remote.NewWorker(ctx, remote.WorkerConfig{Config: nats, Queue: queue, Keyring: ring, Policy: policy,
		Run: cohort.RemoteRunner(base), Concurrency: w.concurrency, Dir: w.dir, Signer: signer, Peers: peers, Log: log})
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "cohort worker: results signed as %s (leads take them only with this line in their $COHORT_HOME/remote/trusted_workers)\n", signer.PublicKey())
	fmt.Fprintf(inv.Stdout, "cohort worker: serving %s (%d at a time, %d trusted leads); waiting for jobs\n", base.Remote.NATS, max(w.concurrency, 1), ring.Len())
	return worker.Serve(ctx)
}
