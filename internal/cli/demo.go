package cli

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/team"
)

// demoScript is the scripted model's part in cohort demo: every agent's
// turns, keyed on its conversation (see the comment at its top).
//
//go:embed demo/team.yaml
var demoScript string

// demoTeam is the team the script forms; demoTeamDescription marks a team
// left behind by an earlier demo in a COHORT_HOME the user chose.
const (
	demoTeam            = "cohort-demo"
	demoTeamDescription = "Review a tiny Go program and fix its greeting"
	demoPrompt          = "Review greet.go and main.go: fix the typo in the greeting, and make sure main.go still prints it right."
	demoProjectMarker   = "${PROJECT}"
)

// demoFiles is the little project the team works on.
var demoFiles = []struct{ name, content string }{
	{"go.mod", "module example.com/hello\n\ngo 1.22\n"},
	{"greet.go", "package main\n\n// Greeting returns the line the program prints for name.\nfunc Greeting(name string) string {\n\treturn \"Helo, \" + name + \"!\"\n}\n"},
	{"main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(Greeting(\"world\"))\n}\n"},
}

// demoOptions are the demo command's own flags.
type demoOptions struct {
	keep  bool
	color string
}

func newDemoCmd(inv *Invocation, o *options) *cobra.Command {
	d := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch a lead and two teammates at work on a scripted model (no API key)",
		Long: `Runs a short team session on the built-in scripted model, with no API key and
no network: a lead forms a team, two in-process teammates claim tasks from the
shared list and talk through their mailboxes, a background agent reports back
with a notification, and the team shuts down. What happens is printed as it
happens.

The demo makes its own project directory (three small files) and, unless
COHORT_HOME is set, its own COHORT_HOME, in a temporary directory that is
removed at the end (--keep leaves it). It ignores your settings and
environment apart from COHORT_HOME, PATH and TMPDIR, and exits 1 if the story
did not reach its end, so it doubles as a smoke test.

--output-format json or stream-json prints the session as cohort -p does
instead of the narrative.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), inv, o, d)
		},
	}
	cmd.Flags().BoolVar(&d.keep, "keep", false, "keep the demo's temporary directory (project, script, state) and print where it is")
	cmd.Flags().StringVar(&d.color, "color", "auto", "color the narrative: auto (when stdout is a terminal), always or never")
	return cmd
}

// demoProbeKey carries a *demoProbe in the context given to Main: a test
// that runs the demo in-process learns where things went.
type demoProbeKey struct{}

// demoProbe is what a demo run reports to its test.
type demoProbe struct {
	session    *cohort.Session // ScriptedModel: the scripted model, with what it was sent
	root       string          // the temporary directory
	cohortHome string
	sessionID  string
	leadID     string
}

// demoWorkspace is the demo's temporary directory: the project, the
// expanded script and (unless the user chose one) COHORT_HOME.
type demoWorkspace struct {
	root, project, home, cohortHome, script string
	ownHome                                 bool // cohortHome lies inside root
}

func newDemoWorkspace(inv *Invocation) (_ *demoWorkspace, err error) {
	base := inv.Getenv("TMPDIR")
	if base == "" {
		base = os.TempDir()
	}
	root, err := os.MkdirTemp(base, "cohort-demo-")
	if err != nil {
		return nil, fmt.Errorf("create the demo's temporary directory in %s: %w (set TMPDIR to a writable directory)", base, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(root)
		}
	}()
	// Resolve symlinks (macOS's /var → /private/var) so the paths the
	// script names are the ones the tools see.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	ws := &demoWorkspace{root: root, project: filepath.Join(root, "project"), home: filepath.Join(root, "home"),
		script: filepath.Join(root, "team.yaml"), cohortHome: inv.Getenv("COHORT_HOME")}
	if ws.cohortHome == "" {
		ws.cohortHome, ws.ownHome = filepath.Join(ws.home, ".cohort"), true
	} else if !filepath.IsAbs(ws.cohortHome) {
		return nil, usageErr("COHORT_HOME=%q is not an absolute path", ws.cohortHome)
	}
	for _, dir := range []string{ws.project, ws.home} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, err
		}
	}
	for _, f := range demoFiles {
		if err := os.WriteFile(filepath.Join(ws.project, f.name), []byte(f.content), 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(ws.script, []byte(expandDemoScript(demoScript, ws.project)), 0o600); err != nil {
		return nil, err
	}
	return ws, nil
}

// expandDemoScript puts the project path into the script. The path goes
// inside double-quoted YAML strings, whose escapes are JSON's.
func expandDemoScript(script, project string) string {
	q, _ := json.Marshal(project)
	return strings.ReplaceAll(script, demoProjectMarker, string(q[1:len(q)-1]))
}

// invocation is the environment the demo's session sees: a sealed HOME (no
// user settings, hooks or agents leak in), the chosen COHORT_HOME, PATH and
// TMPDIR, and nothing else (no API keys, no COHORT_FLAG_*).
func (ws *demoWorkspace) invocation(inv *Invocation) *Invocation {
	vars := map[string]string{"HOME": ws.home, "COHORT_HOME": ws.cohortHome,
		"PATH": inv.Getenv("PATH"), "TMPDIR": inv.Getenv("TMPDIR")}
	var environ []string
	for k, v := range vars {
		if v != "" {
			environ = append(environ, k+"="+v)
		}
	}
	slices.Sort(environ)
	return &Invocation{Args: inv.Args, Stdin: strings.NewReader(""), Stdout: inv.Stdout, Stderr: inv.Stderr,
		Getenv:  func(k string) string { return vars[k] },
		Environ: func() []string { return slices.Clone(environ) },
		Getwd:   func() (string, error) { return ws.project, nil },
	}
}

// config is the demo's session: the user's options (output format,
// verbosity, trace, limits) with the demo's model, directory, teammate
// backend, permission mode and the flags the story needs, in the sealed
// environment.
func (ws *demoWorkspace) config(o *options, inv *Invocation) cohort.Config {
	so := *o
	so.cfg.Model = "scripted:" + ws.script
	so.cfg.Dir = ws.project
	so.cfg.TeammateMode, so.cfg.TeammateBackends = "in-process", nil
	so.cfg.PermissionMode = "acceptEdits"
	so.cfg.Flags = append(slices.Clone(o.cfg.Flags), "agent_teams=on", "coordinator_mode=off", "fork_subagent=off")
	cfg := so.config(ws.invocation(inv))
	cfg.StopAfterRun = true
	return cfg
}

func runDemo(ctx context.Context, inv *Invocation, o *options, d *demoOptions) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	if c := o.cfg; c.Model != "" || c.Dir != "" || c.Resume != "" || c.Continue || c.Agent != "" {
		return usageErr("cohort demo brings its own model, project and session; run it without --model, --cwd, --resume, --continue and --agent")
	}
	color, err := demoColor(d.color, inv)
	if err != nil {
		return err
	}
	ws, err := newDemoWorkspace(inv)
	if err != nil {
		return err
	}
	defer func() {
		if !d.keep {
			if rerr := os.RemoveAll(ws.root); rerr != nil && err == nil {
				err = fmt.Errorf("remove the demo's directory: %w", rerr)
			}
		}
	}()
	start := time.Now()
	w := io.Discard
	if o.outputFormat == "text" {
		w = inv.Stdout
	}
	n := newNarrator(narratorConfig{W: w, Color: color, Start: start, Now: time.Now, Project: ws.project})
	n.header(ws, d.keep)
	if !ws.ownHome {
		if err := clearOldDemoTeam(ctx, ws.cohortHome, n); err != nil {
			return err
		}
	}
	return runDemoSession(ctx, inv, o, ws, n, start)
}

// runDemoSession runs the story and checks that it reached its end.
func runDemoSession(ctx context.Context, inv *Invocation, o *options, ws *demoWorkspace, n *narrator, start time.Time) error {
	s, err := cohort.New(ctx, ws.config(o, inv))
	if err != nil {
		return err
	}
	defer func() { warn(inv, s.Close()) }()
	teams, err := team.NewStore(team.HomeConfig(ws.cohortHome))
	if err != nil {
		return err
	}
	defer teams.Close()
	leadID := s.Agents()[0].ID
	n.bind(leadID, teams)
	if p, ok := ctx.Value(demoProbeKey{}).(*demoProbe); ok {
		*p = demoProbe{session: s, root: ws.root, cohortHome: ws.cohortHome, sessionID: s.ID(), leadID: leadID}
	}
	out := newPrinter(inv.Stdout, inv.Stderr, o.outputFormat, o.cfg.Verbose)
	n.prompt(demoPrompt)
	var r cohort.Event
	for ev, err := range s.Run(ctx, demoPrompt) {
		if err != nil {
			return err
		}
		if ev.Type == cohort.EventResult {
			r = ev
			continue
		}
		n.event(ev)
		if o.outputFormat != "text" {
			out.event(ev)
		}
	}
	switch {
	case r.IsError && strings.HasPrefix(r.Result, "interrupted"):
		r.Result = "interrupted: the demo was cancelled"
	case !r.IsError:
		if err := checkDemoOutcome(ws, teams, n); err != nil {
			r.IsError, r.Result = true, err.Error()
		}
	}
	n.finish(r, teams)
	if o.outputFormat != "text" {
		out.event(r)
	}
	if r.IsError {
		return &exitError{code: 1, err: errors.New(r.Result)}
	}
	return nil
}

// checkDemoOutcome verifies the story's end on disk and in what the lead
// saw: the typo fixed, both tasks completed by their owners, the background
// agent's notification delivered, every teammate gone.
func checkDemoOutcome(ws *demoWorkspace, teams *team.Store, n *narrator) error {
	var problems []string
	data, err := os.ReadFile(filepath.Join(ws.project, "greet.go"))
	if err != nil || !strings.Contains(string(data), `"Hello, "`) {
		problems = append(problems, "greet.go was not fixed")
	}
	if teams == nil {
		return fmt.Errorf("the demo's story did not reach its end: teams are off")
	}
	want := map[string]string{"1": "alice", "2": "bob"}
	if l, err := teams.Tasks(demoTeam); err != nil {
		problems = append(problems, fmt.Sprintf("no task list: %v", err))
	} else if tasks, err := l.List(context.Background()); err != nil {
		problems = append(problems, fmt.Sprintf("task list: %v", err))
	} else {
		for _, t := range tasks {
			if owner, ok := want[t.ID]; ok && t.Status == tasklist.StatusCompleted && t.Owner == owner {
				delete(want, t.ID)
			}
		}
		for id, owner := range want {
			problems = append(problems, fmt.Sprintf("task #%s was not completed by %s", id, owner))
		}
	}
	if active, err := teams.ActiveMembers(demoTeam); err == nil {
		for _, m := range active {
			if m.Name != team.LeadName {
				problems = append(problems, m.Name+" is still active")
			}
		}
	}
	if got := n.notifications(); got != 1 {
		problems = append(problems, fmt.Sprintf("the lead got %d background notifications, not 1", got))
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("the demo's story did not reach its end: %s", strings.Join(problems, "; "))
	}
	return nil
}

// clearOldDemoTeam removes the team an earlier demo left in a COHORT_HOME
// the user chose, so the script can form it again. A team of that name that
// the demo did not make, or whose teammates still run, is left alone.
func clearOldDemoTeam(ctx context.Context, cohortHome string, n *narrator) error {
	store, err := team.NewStore(team.HomeConfig(cohortHome))
	if err != nil {
		return err
	}
	defer store.Close()
	t, err := store.Load(demoTeam)
	if errors.Is(err, team.ErrNotFound) {
		return nil
	}
	dir := filepath.Join(cohortHome, "teams", demoTeam)
	if err != nil || t.Config.Description != demoTeamDescription {
		return &exitError{code: 2, err: fmt.Errorf("%s exists and was not made by cohort demo; move it away or unset COHORT_HOME", dir)}
	}
	for _, m := range t.Config.Members {
		if m.Name != team.LeadName && m.IsActive {
			return &exitError{code: 2, err: fmt.Errorf("team %s in %s still has an active member (%s): is another demo running? If not, remove %s", demoTeam, cohortHome, m.Name, dir)}
		}
	}
	if err := store.Delete(ctx, demoTeam); err != nil {
		return err
	}
	n.note("removed the team an earlier demo left in " + dir)
	return nil
}

// demoColor decides whether the narrative uses ANSI colors.
func demoColor(mode string, inv *Invocation) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		if inv.Getenv("NO_COLOR") != "" || inv.Getenv("TERM") == "dumb" {
			return false, nil
		}
		f, ok := inv.Stdout.(*os.File)
		if !ok {
			return false, nil
		}
		fi, err := f.Stat()
		return err == nil && fi.Mode()&os.ModeCharDevice != 0, nil
	}
	return false, usageErr("--color %q is not one of auto, always, never", mode)
}
