package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
)

// Invocation is everything the CLI takes from its environment.
type Invocation struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv and Environ read the environment (os.Getenv, os.Environ).
	Getenv  func(string) string
	Environ func() []string
	// Getwd is the process cwd (os.Getwd).
	Getwd func() (string, error)
}

// Run runs the CLI with the process environment and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Main(ctx, Invocation{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Getenv: os.Getenv, Environ: os.Environ, Getwd: os.Getwd})
}

// exitError carries a specific exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Main runs the CLI for inv and returns the exit code: 0 success, 1 a failed
// run, 2 bad usage or configuration.
//
// In print mode with --output-format json or stream-json, a run that
// failed before it printed a result (a bad flag, no API key) prints an
// error result on stdout as well, with the same exit code.
func Main(ctx context.Context, inv Invocation) int {
	inv.Stderr = lockedStderr(inv.Stderr)
	o := &options{}
	root := newRoot(ctx, &inv, o)
	line, err := readArgv(inv.Args, root)
	if err != nil {
		startupResult(inv.Stdout, argFormat(inv.Args), err)
		return exitCode(inv, err)
	}
	line.warn(inv.Stderr)
	root.SetArgs(line.args)
	root.SetIn(inv.Stdin)
	root.SetOut(inv.Stdout)
	root.SetErr(inv.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	code := exitCode(inv, err)
	if cmd != root || err == nil {
		return code
	}
	if !o.printedResult && said(err) {
		startupResult(inv.Stdout, argFormat(inv.Args), flagWords(err))
	}
	if sig := signalExit(ctx); sig != 0 {
		return sig // Ctrl-C in print mode: 130
	}
	return code
}

// exitCode reports err on stderr and returns the exit code it means.
func exitCode(inv Invocation, err error) int {
	if err == nil {
		return 0
	}
	err = flagWords(err)
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.code != 0 {
			fmt.Fprintf(inv.Stderr, "cohort: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(inv.Stderr, "cohort: %v\n", err)
	return 2
}

// said reports whether err carries a message (an exitError may carry only
// a code, its reason printed already).
func said(err error) bool {
	var ee *exitError
	return !errors.As(err, &ee) || ee.err != nil
}

func newRoot(ctx context.Context, inv *Invocation, o *options) *cobra.Command {
	root := &cobra.Command{
		Use:   "cohort [flags] [prompt]",
		Short: "Cohort: a runtime for teams of coding agents",
		Long: `Cohort runs a lead coding agent that can delegate to subagents, background
agents, forks of itself and named teammates.

  cohort                                       the interactive session (/help inside)
  cohort -p "fix the failing test"             run one job and print the result
  cohort demo                                  see a team at work on a scripted model
  cohort -p "…" --model scripted:FILE          run on a scripted model, no API key

Real models need ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN); ANTHROPIC_BASE_URL
points the client at a proxy. --provider openai --base-url URL --model NAME runs on
an OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio; OPENAI_API_KEY and
OPENAI_BASE_URL are read too), and an agent's model may name one: openai/NAME.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				_, err := fmt.Fprintln(inv.Stdout, versionLine(cohort.Version()))
				return err
			}
			o.bg.set = cmd.Flags()
			return runRoot(cmd.Context(), inv, o, args)
		},
	}
	o.register(root)
	o.bg.register(root)
	root.SetFlagErrorFunc(nearestFlags)
	// --version is ours, not cobra's (root.Version stays empty): cobra
	// prints "cohort version X", and the only way to change that,
	// SetVersionTemplate, runs text/template, whose reflect MethodByName
	// makes the linker keep every exported method of every reachable type:
	// a binary twice the size (108 MB against 56) and 10 MB more peak RSS
	// in its mapped pages (BENCHMARKS.md §6, "Stop 30"). Never call
	// SetVersionTemplate, SetUsageTemplate or SetHelpTemplate; internal/arch
	// checks the binary.
	root.Flags().BoolP("version", "v", false, "print the version")
	root.AddCommand(newAgentsCmd(inv, o), newFlagsCmd(inv, o), newTeammateCmd(inv, o))
	root.AddCommand(newDemoCmd(inv, o), newDoctorCmd(inv, o))
	root.AddCommand(newTeamsCmd(inv, o), newSessionsCmd(inv, o), newMCPCmd(inv, o))
	root.AddCommand(newStopCmd(inv, false), newStopCmd(inv, true), newRmCmd(inv), newLogsCmd(inv), newAttachCmd(inv, o), newRespawnCmd(inv))
	root.AddCommand(newDreamCmd(inv, o), newMemoryCmd(inv, o), newWorkflowCmd(inv, o), newWorkerCmd(inv, o))
	root.AddCommand(newRewindCmd(inv, o), newCheckpointsCmd(inv, o), newConfigCmd(inv, o))
	return root
}
