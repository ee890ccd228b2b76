package permission

import (
	"fmt"
	"path/filepath"
	"strings"
)

// checkFiles handles the file tools (Read, Edit, Write, NotebookEdit, Glob,
// Grep) and other tools that report paths.
func (e *evaluation) checkFiles() Decision {
	tool := e.req.Tool
	paths, builtin, err := PathsOf(tool, e.req.Input)
	if err != nil {
		return Decision{Behavior: Deny, Reason: "Permission check failed: " + err.Error()}
	}
	paths = append(paths, e.req.Paths...)
	write := editTools[tool] || (!builtin && !e.req.ReadOnly)
	var forms []pathForms
	for _, p := range paths {
		f, err := formsOf(e.cwd, p)
		if err != nil {
			return Decision{Behavior: Ask, FailClosed: true, Reason: fmt.Sprintf("%s needs approval: the path %s could not be resolved (%v).", tool, p, err)}
		}
		forms = append(forms, f)
	}
	covers := func(r *Rule) bool {
		if builtin {
			return r.coversTool(tool)
		}
		return r.coversTool(tool) || (write && editTools[r.Tool]) || (!write && r.Tool == "Read")
	}
	// Every file tool reads what it is given: Edit, MultiEdit, Write and
	// NotebookEdit answer with the file's content (a snippet, the original)
	// and a tool outside the table may show any of its paths. So a Read
	// deny or ask rule covers them all.
	stops := func(r *Rule) bool { return covers(r) || r.coversTool("Read") }
	for _, r := range e.rulesFor(Deny, stops) {
		for _, f := range forms {
			if e.pathMatch(r, f, true) {
				return deniedBy(tool, r, fmt.Sprintf("use %s on %s", tool, f.literal))
			}
		}
	}
	for _, r := range e.rulesFor(Ask, stops) {
		for _, f := range forms {
			if e.pathMatch(r, f, true) {
				return askedBy(tool, r)
			}
		}
	}
	if !write && builtin && e.own != nil && e.own.covers(forms) {
		return Decision{Behavior: Allow, Reason: "the output file of one of the agent's own tasks"}
	}
	if !(write && e.mode == ModePlan) {
		if d, ok := e.allowedPaths(forms, write, covers); ok && (!write || e.namesProtected(d.Rule, forms)) {
			return d
		}
		if builtin && e.sh.inMemory(forms) {
			return Decision{Behavior: Allow, Reason: "inside a memory directory"}
		}
	}
	return e.filesDefault(forms, write)
}

// namesProtected reports whether an allow rule may allow writing the
// protected paths among forms: only a rule whose pattern names the
// protected part (".claude", ".git", ".mcp.json", ".cohort", or a hook
// script's file name) does; a rule for the whole tool or for every path
// ("Edit", "Edit(**)") was not written with them in mind.
func (e *evaluation) namesProtected(r *Rule, forms []pathForms) bool {
	for _, f := range forms {
		if !e.protected(f.resolved) && !e.protected(f.literal) {
			continue
		}
		if r == nil || r.path == nil || !strings.Contains(r.Specifier, protectedPart(f.resolved)) && !strings.Contains(r.Specifier, protectedPart(f.literal)) {
			return false
		}
	}
	return true
}

// protectedPart is the part of a protected path a rule must name: its
// first component that makes it protected, or its file name.
func protectedPart(p string) string {
	for _, c := range strings.Split(p, "/") {
		switch c {
		case ".git", ".claude", ".mcp.json", ".cohort":
			return c
		}
	}
	return filepath.Base(p)
}

// allowedPaths reports whether allow rules cover every path. For reads,
// rules that allow editing a path allow reading it too.
func (e *evaluation) allowedPaths(forms []pathForms, write bool, covers func(*Rule) bool) (Decision, bool) {
	rules := e.rulesFor(Allow, func(r *Rule) bool { return covers(r) || (!write && editTools[r.Tool]) })
	var first *Rule
	for _, f := range forms {
		var hit *Rule
		for _, r := range rules {
			if e.pathMatch(r, f, false) {
				hit = r
				break
			}
		}
		if hit == nil {
			return Decision{}, false
		}
		if first == nil {
			first = hit
		}
	}
	if first == nil {
		return Decision{}, false
	}
	return allowedBy(first), true
}

func (e *evaluation) filesDefault(forms []pathForms, write bool) Decision {
	tool := e.req.Tool
	outside := e.outside(forms)
	if !write {
		if outside == "" {
			return Decision{Behavior: Allow, Reason: "read inside the working directories"}
		}
		return Decision{Behavior: Ask, Reason: fmt.Sprintf("%s of %s needs approval: it is outside the working directories (%s).", tool, outside, strings.Join(e.dirNames(), ", "))}
	}
	if e.mode == ModePlan {
		return Decision{Behavior: Deny, Reason: planReason}
	}
	if e.mode == ModeBypassPermissions || e.mode == ModeAcceptEdits {
		// Modes skip prompts, never the bounds: outside the directories
		// agents write, and on protected paths, a person or a rule decides.
		if outside != "" {
			return Decision{Behavior: Ask, Reason: fmt.Sprintf("Editing %s needs approval in every mode: it is outside the directories agents may write (%s).", outside, strings.Join(e.dirNames(), ", "))}
		}
		if f, ok := e.protectedForm(forms); ok {
			return Decision{Behavior: Ask, Reason: fmt.Sprintf("Editing %s needs approval in every mode: it can change Cohort's settings, agents, hooks, MCP servers or git internals.", f.literal)}
		}
		return Decision{Behavior: Allow, Reason: string(e.mode) + " mode"}
	}
	what := "the file"
	if len(forms) > 0 {
		what = forms[0].literal
	}
	return Decision{Behavior: Ask, Reason: fmt.Sprintf("%s of %s needs the user's approval.", tool, what)}
}

// protectedForm returns the first path that is protected, as written or
// resolved.
func (e *evaluation) protectedForm(forms []pathForms) (pathForms, bool) {
	for _, f := range forms {
		if e.protected(f.resolved) || e.protected(f.literal) {
			return f, true
		}
	}
	return pathForms{}, false
}

// outside returns the first path that is not inside a working directory
// (judged by its resolved form), or "".
func (e *evaluation) outside(forms []pathForms) string {
	for _, f := range forms {
		if !e.inWorkDirs(f.resolved) {
			return f.literal
		}
	}
	return ""
}

func (e *evaluation) inWorkDirs(resolved string) bool {
	for _, d := range e.dirs {
		if within(resolved, d.resolved) {
			return true
		}
	}
	return false
}

func (e *evaluation) dirNames() []string {
	out := make([]string, len(e.dirs))
	for i, d := range e.dirs {
		out[i] = d.path
	}
	return out
}

// pathMatch matches a path rule. broad (deny and ask) tries the literal and
// the resolved path against every root a relative pattern could mean; strict
// (allow) needs the resolved path to match.
func (e *evaluation) pathMatch(r *Rule, f pathForms, broad bool) bool {
	if !broad && r.ByApproval && !faultNoProtected && !e.approvedReach(f) {
		return false
	}
	if r.path == nil {
		return r.Specifier == "" // tool-wide, or an invalid stand-in
	}
	for _, base := range e.rootsOf(r, broad) {
		if r.path.matchUnder(base, f.resolved) || (broad && r.path.matchUnder(base, f.literal)) {
			return true
		}
		if !broad || r.path.anchor == anchorAbs || r.path.anchor == anchorHome {
			continue
		}
		// A deny or ask rule for the project covers its copies in the
		// agents' worktrees too: .cohort/worktrees/<name>/secrets/key is
		// the same secret as secrets/key.
		for _, p := range []string{f.resolved, f.literal} {
			if inner, ok := WorktreeCopy(base, p); ok && r.path.matchUnder(base, inner) {
				return true
			}
		}
	}
	return false
}

// WorktreesDir is where, under a repository's root, agents' worktrees are
// made (package worktree).
const WorktreesDir = ".cohort/worktrees"

// WorktreeCopy maps a path inside an agent's worktree of the repository
// at root (root/.cohort/worktrees/<name>/rest) to the path it copies
// (root/rest); ok is false for any other path.
func WorktreeCopy(root, p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, filepath.Join(root, WorktreesDir)+"/")
	if !ok {
		return "", false
	}
	_, inner, _ := strings.Cut(rest, "/")
	return filepath.Join(root, inner), true
}

// rootsOf lists the directories a rule's pattern is relative to, each in
// its written and resolved form. "./x" and "x" mean the agent's cwd (as in
// Claude Code); deny and ask rules also try the session's cwd and the
// settings file's project directory, so a rule protects what its author
// most likely meant wherever the agent runs.
func (e *evaluation) rootsOf(r *Rule, broad bool) []string {
	var raw []string
	root := r.Root
	if root == "" {
		root = e.sh.cwd
	}
	switch r.path.anchor {
	case anchorAbs:
		return []string{"/"}
	case anchorHome:
		raw = []string{e.sh.home}
	case anchorRoot:
		raw = []string{root}
	case anchorCwd:
		raw = []string{e.cwd}
		if broad {
			raw = append(raw, e.sh.cwd, root)
		}
	}
	var out []string
	for _, b := range raw {
		out = append(out, b)
		res, ok := e.bases[b]
		if !ok {
			var err error
			if res, err = resolvePath(b); err != nil {
				res = b
			}
			e.bases[b] = res
		}
		if res != b {
			out = append(out, res)
		}
	}
	return out
}

// ProtectedPath reports whether a path (absolute, or relative to a
// repository's root, with forward slashes) has the shape of a file an
// agent must not edit without an explicit rule: anything inside .git/
// (hooks and config run code) or .claude/, .mcp.json (it names programs
// the next session may start), and .cohort/settings* and .cohort/agents/
// (they grant permissions and define hooks). The scripts
// that configured hooks run and $COHORT_HOME are protected too, but
// knowing them takes a session's settings (Config.Protected); a Checker
// adds them. Package remote holds the patches that workers return to the
// same rule.
func ProtectedPath(p string) bool {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		switch c {
		case ".git", ".claude", ".mcp.json":
			return true
		case ".cohort":
			if i+1 == len(parts) {
				return true
			}
			next := parts[i+1]
			if strings.HasPrefix(next, "settings") || next == "agents" {
				return true
			}
		}
	}
	return false
}

// protected reports paths an agent must not edit without an explicit rule
// even in acceptEdits mode: settings and agent definitions (they grant
// permissions and define hooks), git internals (hooks run code), and
// $COHORT_HOME (mailboxes, teams, tasks), and the scripts hooks run
// (Config.Protected).
func (e *evaluation) protected(p string) bool {
	if faultNoProtected { // a test build's empty list (fault_on.go)
		return false
	}
	if ProtectedPath(p) || (&Checker{sh: e.sh}).ProtectedFile(p) {
		return true
	}
	if e.sh.cohortHome == "" || !within(p, e.sh.cohortHome) {
		return false
	}
	// Project memory ($COHORT_HOME/projects/<slug>/memory/...) is the
	// agents' to write.
	rel, _ := filepath.Rel(e.sh.cohortHome, p)
	mem := strings.Split(rel, "/")
	return !(len(mem) >= 3 && mem[0] == "projects" && mem[2] == "memory")
}

// keepScriptDirsBelowRoots drops from the protected directories those
// that are a working directory: a hook script at the top of the project
// protects itself, not the whole project (every write there would ask in
// every mode). The sandbox does the same, and notes that what such a
// script sources beside it is not protected.
func (sh *shared) keepScriptDirsBelowRoots() {
	var keep []string
	for _, d := range sh.protectedDirs {
		top := false
		for _, w := range sh.dirs {
			top = top || d == w.path || d == w.resolved
		}
		if !top {
			keep = append(keep, d)
		}
	}
	sh.protectedDirs = keep
}
