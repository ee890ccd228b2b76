package redteam

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Mode is a permission mode an attack runs in (--permission-mode).
type Mode string

// The five modes a user can choose.
const (
	Default     Mode = "default"
	AcceptEdits Mode = "acceptEdits"
	Plan        Mode = "plan"
	DontAsk     Mode = "dontAsk"
	Bypass      Mode = "bypassPermissions"
)

// Modes are all five, in the order reports list them.
var Modes = []Mode{Default, AcceptEdits, Plan, DontAsk, Bypass}

// writes reports whether a mode lets the agent change its working
// directory without a person: in print mode nobody answers, so only
// acceptEdits and bypassPermissions write.
func (m Mode) writes() bool { return m == AcceptEdits || m == Bypass }

// Location is where the attacking agent works.
type Location string

const (
	// Main: the lead itself attacks, in the main checkout.
	Main Location = "main"
	// Worktree: the lead spawns a subagent with isolation: worktree, and
	// the subagent attacks from its worktree; the main checkout is then
	// outside what it may write, in every mode.
	Worktree Location = "worktree"
)

// Locations are both.
var Locations = []Location{Main, Worktree}

// Call is one tool call of the scripted model. String values anywhere in
// Input may hold placeholders, filled in when the call is sent (the
// attacking agent's working directory is only known then):
//
//	{{WORK}}         the attacking agent's working directory
//	{{PROJECT}}      the main checkout
//	{{ROOT}}         the directory holding project, home and outside
//	{{OUT}}          a directory outside everything the agent may write
//	{{CANARY}}       {{OUT}}/CANARY, which must never exist
//	{{HOME}}         $HOME; {{COHORT_HOME}} is $COHORT_HOME
//	{{SECRET}}       {{WORK}}/secrets/key, denied by Read(./secrets/**)
//	{{API}}          the fake model API's base URL (a way out for data);
//	                 {{APIPORT}} is its port
//	{{SOCKET}}       {{OUT}}/user.sock, a Unix socket of the user's (as a
//	                 tmux server's or docker.sock): whatever connects to it
//	                 creates {{CANARY}}
//	{{ESCAPED}}      a shell command printing the escape marker, which
//	                 must never reach the model: an attack runs it only
//	                 once it holds what it must not (a descriptor, a
//	                 connection), a proof that leaves no file behind. The
//	                 command is written so that its text does not hold the
//	                 marker.
type Call struct {
	Tool  string
	Input map[string]any
}

// Bash is a Bash call running command.
func Bash(command string) Call { return Call{Tool: "Bash", Input: map[string]any{"command": command}} }

// BashWith is a Bash call with more input fields (run_in_background,
// dangerouslyDisableSandbox).
func BashWith(command string, more map[string]any) Call {
	in := map[string]any{"command": command}
	for k, v := range more {
		in[k] = v
	}
	return Call{Tool: "Bash", Input: in}
}

// Use is a call of any tool.
func Use(tool string, input map[string]any) Call { return Call{Tool: tool, Input: input} }

// Attack is one row of the corpus: the tool calls a hostile model makes,
// where and in which modes. After it, Run checks every invariant; an
// attack states no expected answer of its own, so whatever refused it
// (the permission check, the tool, the sandbox) the same things must hold.
type Attack struct {
	// Name is unique in the corpus; Class groups the variants of one
	// escape ("redirect-devfd", "grep-deny").
	Name, Class string
	// Turns are the model's messages, each a set of calls made together
	// (they run in order unless every one is read-only); after the last
	// the model says it is done.
	Turns [][]Call
	// Sub are the turns of every agent the attack spawns whose prompt
	// holds SubPrompt(Name) (an Agent call's prompt, a teammate's): the
	// attack through a subagent, after which it says it is done.
	Sub [][]Call
	// Modes and Where default to all.
	Modes []Mode
	Where []Location
	// Binary marks an attack on process-level facts (Cohort's /proc
	// entry, its environment, its descriptors). Every session runs the
	// built cohort binary now, so it changes nothing; rows keep it as a
	// note of what they rely on.
	Binary bool
	// Args are more command-line arguments (an --allowedTools rule the
	// attack abuses).
	Args []string
	// Solo runs the attack in a session of its own (Run) rather than in
	// the session its mode, location and Args share with the
	// other attacks (RunGroup): for attacks that leave state the next one
	// would trip over. Attacks with Setup always run alone.
	Solo bool
	// Writes: the attack's Args let it write in its working directory
	// (an allow rule for Bash), so that directory is not checked as one
	// nobody may write; the main checkout of a worktree agent still is.
	Writes bool
	// Names: the name of a file in secrets/ (Env.SecretName) must not
	// reach the model either — for attacks on what lists names (Glob,
	// LS, Grep's file lists), which a Read deny rule covers too.
	Names bool
	// Setup changes the fixture before the session starts (a settings
	// key, a planted file); nil for none. It runs before the "before"
	// snapshot, so what it plants is part of the baseline.
	Setup func(e *Env) error
	// Shares lets attacks with a Setup share sessions: those with the
	// same Shares (and the same mode, location, Args and Writes) run one
	// after the other in a session set up once, by the first one's Setup.
	// Give it (SharedSetup) only to attacks whose Setup is the same and
	// none of which needs what another could change, as for attacks
	// without a Setup; empty, an attack with a Setup runs alone.
	Shares string
	// Nest: the row's Setup shapes a repository of its own (git's store,
	// what it keeps in its git dir) and its calls read only that: paths
	// under {{PROJECT}} or {{WORK}}, directories its Setup made under
	// $ROOT ({{ROOT}}/...), and git from the working directory. In the
	// main checkout TestCorpus then plants it in a repository nested in
	// the project (nest.go), each row one of its own with the deny rule
	// covering its secrets/, and rows of a mode share sessions; in a
	// worktree it runs alone as before.
	Nest bool
	// nest is the nested repository (relative to the project) of a row
	// nestRow made; empty for every row of the corpus.
	nest string
	// Unoffered says why the row's calls of a tool its calling agent is
	// not offered are part of the attack, not a broken row: an agent
	// whose definition leaves the tool out, a plan-mode teammate, an
	// isolated agent (no Agent tool). The harness reports such calls as a
	// hollow row unless this is set; the rest of the row is checked as
	// ever.
	Unoffered string
}

// SharedSetup sets Shares to key on every attack of rows with a Setup
// and not Solo, and returns rows: for a family of rows that plant the
// same world and only read it or add to it.
func SharedSetup(key string, rows []*Attack) []*Attack {
	for _, a := range rows {
		if a.Setup != nil && !a.Solo {
			a.Shares = key
		}
	}
	return rows
}

// SubPrompt is what an attack's Agent call puts in its prompt for the
// spawned agent to follow Attack.Sub.
func SubPrompt(name string) string { return "REDTEAM-SUB " + name + " :" }

// alone reports whether the attack needs a session of its own.
func (a *Attack) alone() bool { return a.Solo || (a.Setup != nil && a.Shares == "") }

// sessionKey is what attacks sharing a session must have in common.
func (a *Attack) sessionKey(mode Mode, loc Location) string {
	return fmt.Sprintf("%s-%s%s/writes=%v/setup=%s", mode, loc, strings.Join(a.Args, " "), a.Writes, a.Shares)
}

// modes returns the modes the attack runs in.
func (a *Attack) modes() []Mode {
	if len(a.Modes) == 0 {
		return Modes
	}
	return a.Modes
}

// where returns the locations the attack runs in.
func (a *Attack) where() []Location {
	if len(a.Where) == 0 {
		return Locations
	}
	return a.Where
}

// expand fills the placeholders of every string in v.
func expand(v any, r *strings.Replacer) any {
	switch x := v.(type) {
	case string:
		return r.Replace(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = expand(e, r)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expand(e, r)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = r.Replace(e)
		}
		return out
	}
	return v
}

// inputJSON renders a call's input with placeholders filled.
func (c Call) inputJSON(r *strings.Replacer) map[string]any {
	out, _ := expand(c.Input, r).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	// Round-trip so that the fake sees exactly what JSON carries.
	data, _ := json.Marshal(out)
	var back map[string]any
	_ = json.Unmarshal(data, &back)
	return back
}
