package permission

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkBash decides a Bash call from the analysed command line: a deny or
// ask rule matching any command (at any wrapper layer) decides; an allow
// needs every command allowed by a rule or read-only inside the working
// directories, and nothing in the line that could not be analysed.
func (e *evaluation) checkBash() Decision {
	line, err := commandOf(e.req.Input)
	if err != nil {
		return Decision{Behavior: Deny, Reason: "Permission check failed: " + err.Error()}
	}
	an := analyze(line, e.cwd, e.sh.home)
	e.bash = an
	for _, b := range []Behavior{Deny, Ask} {
		if d, ok := e.bashRules(b, an); ok {
			return d
		}
		if d, ok := e.bashPaths(b, an); ok {
			return d
		}
		if b == Deny {
			if d, ok := e.bashGitHistory(an); ok {
				return d
			}
		}
		if len(an.opaque) > 0 && e.bashRelevant(b) {
			return Decision{Behavior: Ask, FailClosed: true, Reason: fmt.Sprintf("This command needs approval: it could not be checked against the %s rules because %s.", b, strings.Join(an.opaque, "; "))}
		}
	}
	d := e.bashAllow(an)
	if faultReadOnly { // a test build's wrong analysis (fault_on.go)
		d = Decision{Behavior: Allow, Reason: "read-only command (fault injected)", ReadOnly: e.mode != ModeBypassPermissions}
	}
	if d.Behavior != Allow || !unsandboxedOf(e.req.Input) {
		return d
	}
	// An allow rule, the analysis or the mode judged a sandboxed run;
	// running outside the sandbox is a person's call
	// (sandbox.allowUnsandboxedCommands).
	switch {
	case e.sh.unsandboxed == UnsandboxedIgnored:
		return d // the command runs sandboxed (the Bash tool ignores the flag)
	case e.sh.unsandboxed == UnsandboxedAllowed && e.mode == ModeBypassPermissions:
		return d
	case e.sh.unsandboxed == UnsandboxedAllowed:
		return Decision{Behavior: Ask, Reason: "This Bash command asks to run outside the sandbox (dangerouslyDisableSandbox), which needs the user's approval."}
	}
	return Decision{Behavior: Ask, FailClosed: true, Reason: "This Bash command asks to run outside the sandbox (dangerouslyDisableSandbox), which needs a person's approval in every mode; the user can set sandbox.allowUnsandboxedCommands to false to have such commands run sandboxed instead."}
}

// unsandboxedOf reports a Bash call with dangerouslyDisableSandbox set.
func unsandboxedOf(input json.RawMessage) bool {
	var in struct {
		NoSandbox bool `json:"dangerouslyDisableSandbox"`
	}
	return json.Unmarshal(input, &in) == nil && in.NoSandbox
}

// CommandsMatch reports whether every command of a Bash line matches one
// of the specifiers as an allow rule would ("docker:*", "npm test"), and
// the line holds nothing the analysis could not see or that could change
// what runs. It decides sandbox.excludedCommands: a line runs outside the
// sandbox only when all of it is excluded. A redirect that writes a file
// is not part of any command: the shell opens it, outside the sandbox
// too, so "git status > ~/.bashrc" is not "git status" (only /dev/null,
// the terminal and the untouched standard output and error are not
// files, as for the read-only analysis). Safe for concurrent use.
func CommandsMatch(line string, specifiers []string) bool {
	var pats []*bashPattern
	for _, sp := range specifiers {
		if p, err := compileBash(sp); err == nil && !p.rawOnly {
			pats = append(pats, p)
		}
	}
	an := analyze(line, "", "")
	if len(pats) == 0 || len(an.opaque) > 0 || len(an.unsafe) > 0 || len(an.commands) == 0 {
		return false
	}
	for _, r := range an.redirs {
		if r.write && !an.harmlessTarget(plain(r.target)) {
			return false
		}
	}
	for _, c := range an.commands {
		matched := false
		for _, p := range pats {
			matched = matched || p.matchWords(c.inner().words, false)
		}
		if !matched {
			return false
		}
	}
	return true
}

func (e *evaluation) bashCovers(r *Rule) bool { return r.coversTool("Bash") }

// pathRuleForBash selects path rules that also apply to shell commands.
func pathRuleForBash(r *Rule) bool {
	return r.path != nil && (readTools[r.Tool] || editTools[r.Tool])
}

// maxGlobResult bounds how many paths one glob in a command may match
// before its check gives up (and asks).
const maxGlobResult = 1000

// bashRelevant reports whether any rule with behavior b could apply to a
// Bash command.
func (e *evaluation) bashRelevant(b Behavior) bool {
	return len(e.rulesFor(b, e.bashCovers)) > 0 || len(e.rulesFor(b, pathRuleForBash)) > 0
}

func (e *evaluation) bashRules(b Behavior, an *analysis) (Decision, bool) {
	for _, r := range e.rulesFor(b, e.bashCovers) {
		hit := ""
		switch {
		case r.Specifier == "":
			hit = an.line
		case r.bash.rawOnly:
			if r.bash.matchLine(an.line, true) {
				hit = an.line
			}
		default:
			hit = matchAnyLayer(r.bash, an)
		}
		if hit == "" {
			continue
		}
		if b == Deny {
			return deniedBy("Bash", r, "run `"+hit+"`"), true
		}
		return askedBy("Bash", r), true
	}
	return Decision{}, false
}

// matchAnyLayer returns the first command layer (as text) a deny or ask
// pattern matches: its words, its words with the command name reduced to
// its base name ("/bin/rm" is rm), and the alternative readings of
// wrappers whose options were not understood.
func matchAnyLayer(p *bashPattern, an *analysis) string {
	for _, c := range an.commands {
		for _, l := range c.layers {
			cands := append([][]string{l.words}, l.alts...)
			if n := l.name(); strings.Contains(n, "/") {
				cands = append(cands, append([]string{filepath.Base(n)}, l.words[1:]...))
			}
			for _, ws := range cands {
				if p.matchWords(ws, true) {
					return wordsText(l.words)
				}
			}
		}
	}
	return ""
}

func wordsText(ws []string) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		if w == dynWord {
			w = "$…"
		}
		out[i] = plain(w)
	}
	return strings.Join(out, " ")
}

// bashPaths applies Read and Edit path rules to the paths a command line
// names: every argument that could be a path, relative to every directory
// the command may run in, plus redirection targets. Read rules apply to
// every command, Edit rules to commands that are not read-only and to
// output redirections.
func (e *evaluation) bashPaths(b Behavior, an *analysis) (Decision, bool) {
	rules := e.rulesFor(b, pathRuleForBash)
	if len(rules) == 0 {
		return Decision{}, false
	}
	var unknown []string
	check := func(cwds []string, cand string, write bool) (Decision, bool) {
		forms, ok := e.expandPath(cwds, cand)
		if !ok {
			unknown = append(unknown, cand)
		}
		for _, r := range rules {
			if !readTools[r.Tool] && !(write && editTools[r.Tool]) {
				continue
			}
			for _, f := range forms {
				if e.pathMatch(r, f, true) {
					if b == Deny {
						return deniedBy("Bash", r, fmt.Sprintf("touch %s from Bash", f.literal)), true
					}
					return askedBy("Bash", r), true
				}
			}
		}
		return Decision{}, false
	}
	for _, c := range an.commands {
		ro, _ := readOnlyWords(c.inner().words)
		for _, cand := range commandPathArgs(c) {
			if d, ok := check(c.cwds, cand, !ro); ok {
				return d, true
			}
		}
	}
	for _, r := range an.redirs {
		if d, ok := check(r.cwds, r.target, r.write); ok {
			return d, true
		}
	}
	// Changing into a directory reads it: "cd secrets && ls" lists it.
	for _, d := range an.cds {
		if d == "" {
			continue // unknown: reported as unsafe already
		}
		if dec, ok := check([]string{"/"}, d, false); ok {
			return dec, true
		}
	}
	if len(unknown) > 0 {
		return Decision{Behavior: Ask, FailClosed: true, Reason: fmt.Sprintf("This command needs approval: the paths %s are only known at run time, so the %s rules for paths cannot be checked.", wordsText(unknown), b)}, true
	}
	return Decision{}, false
}

// commandPathArgs lists the words of a command that may name files: the
// non-option arguments of every layer, values of --opt=value, attached
// values of short options that look like paths, and command names that
// are paths. Arguments of commands known to take no paths (echo) are
// skipped.
func commandPathArgs(c *command) []string {
	var out []string
	for _, l := range c.layers {
		if len(l.words) == 0 {
			continue
		}
		if n := l.name(); strings.Contains(n, "/") {
			out = append(out, n)
		}
		if _, known := readOnlyCommands()[filepath.Base(l.name())]; known {
			// The allow-list knows which words are paths, options' values
			// included (date -f FILE).
			if ok, paths := readOnlyWords(append([]string{filepath.Base(l.name())}, l.words[1:]...)); ok {
				out = append(out, paths...)
				continue
			}
		}
		for _, w := range l.words[1:] {
			switch {
			case w == dynWord || !strings.HasPrefix(w, "-") || w == "-":
				out = append(out, w)
			case strings.Contains(w, "="):
				_, v, _ := strings.Cut(w, "=")
				out = append(out, v)
			case !strings.HasPrefix(w, "--") && len(w) > 2 && strings.Contains(w[2:], "/"):
				out = append(out, w[2:])
			}
		}
	}
	return out
}

// expandPath turns a command's path word into path forms for every cwd it
// may run in, expanding globs against the file system. ok is false when the
// path cannot be fully known (dynamic word, an unknown cwd, too many
// matches); forms then still holds what could be known, so that a deny
// rule matching one of them is not lost.
func (e *evaluation) expandPath(cwds []string, cand string) (forms []pathForms, ok bool) {
	if cand == dynWord {
		return nil, false
	}
	cand = plain(cand)
	if cand == "" || cand == "-" {
		return nil, true
	}
	ok = true
	for _, cwd := range cwds {
		if cwd == "" && !filepath.IsAbs(cand) {
			ok = false
			continue
		}
		names := []string{cand}
		if strings.ContainsAny(cand, "*?[") {
			matches, all := boundedGlob(absolute(cwd, cand), maxGlobResult)
			ok = ok && all
			names = append(names, matches...)
		}
		for _, n := range names {
			f, err := formsOf(cwd, n)
			if err != nil {
				ok = false
				continue
			}
			forms = append(forms, f)
		}
	}
	return forms, ok
}

// bashAllow is the allow stage and the mode default for Bash.
func (e *evaluation) bashAllow(an *analysis) Decision {
	allows := e.rulesFor(Allow, e.bashCovers)
	planBlocks := e.mode == ModePlan
	for _, r := range allows {
		if r.Specifier == "" && !planBlocks {
			return allowedBy(r)
		}
		if r.bash != nil && r.bash.rawOnly && r.bash.matchLine(an.line, false) && !planBlocks {
			return allowedBy(r)
		}
	}
	problems := append(append([]string(nil), an.opaque...), an.unsafe...)
	problems = append(problems, e.cdProblems(an)...)
	problems = append(problems, e.redirectProblems(an)...)
	var needs []string
	var used *Rule
	readOnly := true
	for _, c := range an.commands {
		if e.readOnlyOK(c) {
			continue
		}
		readOnly = false
		if r := e.allowRuleFor(c, allows); r != nil {
			used = r
			continue
		}
		needs = append(needs, wordsText(c.inner().words))
	}
	if len(problems) == 0 && len(needs) == 0 {
		switch {
		case readOnly:
			return Decision{Behavior: Allow, Reason: "read-only command inside the working directories", ReadOnly: !an.writesFiles() && e.mode != ModeBypassPermissions}
		case !planBlocks:
			return allowedBy(used)
		}
	}
	switch {
	case e.mode == ModeBypassPermissions:
		return Decision{Behavior: Allow, Reason: "bypassPermissions mode"}
	case planBlocks:
		// A read-only line that reaches outside the working directories may
		// still be approved; anything else is not for plan mode.
		if ro, _ := an.readOnly(); !ro {
			return Decision{Behavior: Deny, Reason: planReason}
		}
	}
	var why []string
	if len(needs) > 0 {
		why = append(why, "`"+strings.Join(needs, "`, `")+"` "+pick(len(needs) == 1, "is", "are")+" not pre-approved")
	}
	why = append(why, problems...)
	return Decision{Behavior: Ask, Reason: "This Bash command needs the user's approval: " + strings.Join(why, "; ") + "."}
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// writesFiles reports output redirections to anything but the targets the
// analysis holds harmless (/dev/null and the like): a read-only line that
// writes a file was allowed by the mode or an Edit rule, not by being
// read-only.
func (an *analysis) writesFiles() bool {
	for _, r := range an.redirs {
		if r.write && !an.harmlessTarget(plain(r.target)) {
			return true
		}
	}
	return false
}

// allowRuleFor finds an allow rule for a command: a rule matching one of
// its layers, with every layer outside that one a transparent wrapper.
func (e *evaluation) allowRuleFor(c *command, allows []*Rule) *Rule {
	for _, l := range c.layers {
		for _, r := range allows {
			if r.bash == nil || r.bash.rawOnly {
				continue
			}
			if l.openArgs && !r.bash.hasWildcard() {
				continue // an exact rule cannot vouch for arguments read at run time
			}
			if r.bash.matchWords(l.words, false) {
				return r
			}
		}
		if !l.transparent {
			return nil
		}
	}
	return nil
}

// readOnlyOK reports whether a command only reads, and only inside the
// working directories (or paths a Read or Edit allow rule covers).
func (e *evaluation) readOnlyOK(c *command) bool {
	for _, l := range c.layers[:len(c.layers)-1] {
		if !l.transparent {
			return false
		}
	}
	in := c.inner()
	ok, paths := readOnlyWords(in.words)
	if !ok {
		return false
	}
	if in.openArgs {
		if spec := readOnlyCommands()[filepath.Base(in.name())]; spec == nil || spec.paths {
			return false
		}
	}
	for _, p := range paths {
		if !e.readable(c.cwds, p) {
			return false
		}
	}
	return true
}

// readable reports whether a path word resolves inside the working
// directories (or under a Read/Edit allow rule) from every cwd.
func (e *evaluation) readable(cwds []string, p string) bool {
	forms, ok := e.expandPath(cwds, p)
	if !ok {
		return false
	}
	allows := e.rulesFor(Allow, func(r *Rule) bool { return pathRuleForBash(r) })
	for _, f := range forms {
		if e.inWorkDirs(f.resolved) {
			continue
		}
		covered := false
		for _, r := range allows {
			if e.pathMatch(r, f, false) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

// cdProblems reports cd targets outside the working directories.
func (e *evaluation) cdProblems(an *analysis) []string {
	var out []string
	for _, d := range an.cds {
		if d == "" {
			continue // already reported as unsafe
		}
		f, err := formsOf("/", d)
		if err != nil || !e.inWorkDirs(f.resolved) {
			out = append(out, "it changes to "+d+", outside the working directories")
		}
	}
	return out
}

// redirectProblems reports redirections an allow must not cover: output
// into files that are not editable without asking, input from files
// outside the working directories.
func (e *evaluation) redirectProblems(an *analysis) []string {
	var out []string
	edits := e.rulesFor(Allow, func(r *Rule) bool { return r.path != nil && editTools[r.Tool] })
	for _, r := range an.redirs {
		if !r.write {
			if !e.readable(r.cwds, r.target) {
				out = append(out, "it reads "+wordsText([]string{r.target})+" from outside the working directories")
			}
			continue
		}
		if an.harmlessTarget(plain(r.target)) {
			continue
		}
		forms, ok := e.expandPath(r.cwds, r.target)
		if !ok {
			out = append(out, "it writes to a file only known at run time")
			continue
		}
		for _, f := range forms {
			if !e.editable(f, edits) {
				out = append(out, "it writes to "+f.literal)
				break
			}
		}
	}
	return out
}

// editable reports whether a write to f needs no approval: an Edit allow
// rule covers it, or acceptEdits (or bypass) mode is on and it is an
// unprotected path inside the working directories.
func (e *evaluation) editable(f pathForms, edits []*Rule) bool {
	for _, r := range edits {
		if e.pathMatch(r, f, false) {
			return true
		}
	}
	if e.mode != ModeAcceptEdits && e.mode != ModeBypassPermissions {
		return false
	}
	return e.inWorkDirs(f.resolved) && !e.protected(f.resolved) && !e.protected(f.literal)
}

// boundedGlob expands an absolute glob pattern like the shell (a * also
// matches names starting with a dot, to err on the side of matching), but
// gives up (ok false) when more than limit paths match at any level or
// more than 20*limit directory entries would have to be read, so a line
// like "cat /*/*/*/*" cannot make the check walk the whole disk.
func boundedGlob(pattern string, limit int) (matches []string, ok bool) {
	cur := []string{"/"}
	read := 0
	for _, comp := range strings.Split(pattern, "/") {
		if comp == "" {
			continue
		}
		if !strings.ContainsAny(comp, "*?[") {
			for i, d := range cur {
				cur[i] = d + pickSep(d) + comp
			}
			continue
		}
		if _, err := filepath.Match(comp, ""); err != nil {
			return nil, true // not a valid pattern: the shell keeps the word as it is
		}
		var next []string
		for _, d := range cur {
			entries, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			if read += len(entries); read > 20*limit {
				return nil, false
			}
			for _, e := range entries {
				if m, _ := filepath.Match(comp, e.Name()); m {
					next = append(next, d+pickSep(d)+e.Name())
				}
			}
			if len(next) > limit {
				return nil, false
			}
		}
		cur = next
	}
	return cur, true
}

func pickSep(dir string) string {
	if strings.HasSuffix(dir, "/") {
		return ""
	}
	return "/"
}
