package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/tool"
)

// canUse answers permission prompts with the plan's Ask (Config.CanUseTool),
// naming the asking agent: one of this process's (its record) or a
// teammate in a process of its own (its team record), and saying what the
// sandbox makes of a Bash call. The rules an answer allows always are kept
// for every agent of the session and saved to the project's local
// settings; the asker (perhaps a teammate in a process of its own) gets
// them for its session. The directories it lets commands write are the
// sandbox's for the rest of the session.
type canUse struct{ s *Session }

func (c canUse) Prompt(ctx context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	p := Prompt{PromptRequest: req, Asker: c.s.describeAsker(req.AgentID)}
	if c.s.inProcess(req.AgentID) {
		p.Unsandboxed, p.Blocked = c.s.sandboxView(req)
	}
	a, err := c.s.Permissions.Ask(ctx, p)
	if err != nil {
		return permission.PromptDecision{}, err
	}
	d := a.PromptDecision
	if d.Allow && len(a.AllowWrite) > 0 {
		if msg := c.s.allowWrite(a.AllowWrite, p.Blocked); msg != "" {
			return permission.PromptDecision{Message: msg}, nil
		}
	}
	if !d.Allow || len(a.Always) == 0 {
		return d, nil
	}
	if err := c.s.checker.AddRules(ctx, permission.Allow, a.Always, permission.DestLocal); err != nil {
		return permission.PromptDecision{Message: fmt.Sprintf("The answer's rule could not be kept: %v", err)}, nil
	}
	u := permission.RuleUpdate{Type: permission.UpdateAddRules, Behavior: permission.Allow, Destination: permission.DestSession}
	for _, r := range a.Always {
		rule, err := permission.ParseRule(r)
		if err != nil {
			return permission.PromptDecision{Message: fmt.Sprintf("The answer's rule %q does not parse: %v", r, err)}, nil
		}
		u.Rules = append(u.Rules, permission.ValueOf(rule))
	}
	d.Updates = []permission.RuleUpdate{u}
	return d, nil
}

// inProcess reports whether agent id runs in this process, with this
// session's sandbox (a teammate in a process of its own has its own).
func (s *Session) inProcess(id string) bool {
	if id == "" {
		return true
	}
	_, ok := s.rt.Lookup(id)
	return ok
}

// sandboxView says what the sandbox makes of a Bash call: unsandboxed
// when it runs outside the session's sandbox (dangerouslyDisableSandbox
// honoured, or an excluded command), else the directories it would write
// that the writing profile keeps it from (permission.WriteTargets: what
// can be told before it runs). Each is the nearest existing directory of
// such a path, which AllowWrite can open; paths the sandbox protects
// (a .git, settings) and directories Cohort keeps out of reach (allowable)
// are never offered.
func (s *Session) sandboxView(req permission.PromptRequest) (unsandboxed bool, blocked []string) {
	if req.ToolName != "Bash" || s.sandbox == nil {
		return false, nil
	}
	var in struct {
		Command   string `json:"command"`
		NoSandbox bool   `json:"dangerouslyDisableSandbox"`
	}
	if json.Unmarshal(req.Input, &in) != nil {
		return false, nil
	}
	keep := s.checker != nil && s.checker.Unsandboxed() == permission.UnsandboxedIgnored
	if (in.NoSandbox && !keep) || s.bashExcluded(in.Command) {
		return true, nil
	}
	cwd := req.Cwd
	if cwd == "" {
		cwd = s.Process.Cwd
	}
	writable, protected := s.sandbox.WritableFor(cwd, sandbox.Writing)
	for _, t := range permission.WriteTargets(in.Command, cwd, s.Process.Paths.Home) {
		real, dir := resolveExisting(t)
		if inAny(real, writable) || inAny(real, protected) || dir == "" || !s.allowable(dir) {
			continue
		}
		if !slices.Contains(blocked, dir) {
			blocked = append(blocked, dir)
		}
	}
	return false, blocked
}

// allowWrite opens dirs to the sandbox for the session, as an answer
// asked; only directories the prompt offered are taken. It returns a
// sentence for the model when that failed.
func (s *Session) allowWrite(dirs, offered []string) string {
	for _, d := range dirs {
		if !slices.Contains(offered, d) {
			return fmt.Sprintf("The answer would let commands write %s, which the prompt did not offer; the call was not run.", d)
		}
	}
	if err := s.sandbox.AllowWrite(dirs...); err != nil {
		return fmt.Sprintf("The sandbox could not be opened as the user asked (%v); the call was not run.", err)
	}
	fmt.Fprintf(s.Process.Stderr, "cohort: sandbox: commands may write in %s for the rest of the session (the user allowed it)\n", strings.Join(dirs, ", "))
	return ""
}

// allowable reports whether a prompt may offer to let commands write dir:
// never the root, the home itself, or a directory that is or holds
// Cohort's home, ~/.claude (settings, hooks, sessions) or the user's
// trust registry.
func (s *Session) allowable(dir string) bool {
	home := s.Process.Paths.Home
	if dir == "/" || dir == home {
		return false
	}
	for _, keep := range []string{s.Process.Paths.CohortHome, filepath.Join(home, ".claude"), configtrust.UserDir(s.Process.Getenv)} {
		if keep != "" && (within(keep, dir) || within(dir, keep)) {
			return false
		}
	}
	return true
}

// resolveExisting resolves path's symlinks as far as it exists: real is
// the path through its nearest existing ancestor's real path, dir the
// real path of the nearest existing directory above it ("" when none).
func resolveExisting(path string) (real, dir string) {
	rest := ""
	p := path
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path, ""
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return real, d
		}
		if d == filepath.Dir(d) {
			return real, ""
		}
	}
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+string(filepath.Separator))
}

func inAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// describeAsker is who asks, by agent id: ID, Name, Kind, Type and Color.
func (s *Session) describeAsker(agentID string) tool.Caller {
	who := tool.Caller{ID: agentID}
	if s.rt != nil {
		if a, ok := s.rt.Lookup(agentID); ok {
			return a.Info()
		}
	}
	if s.team != nil {
		name, _, _ := strings.Cut(agentID, "@")
		for _, m := range s.team.Members() {
			if m.AgentID == agentID || m.Name == name {
				who.Name, who.Kind, who.Type, who.Color = m.Name, tool.KindTeammate, m.AgentType, m.Color
				return who
			}
		}
	}
	if agentID == "" && s.lead != nil {
		who.ID, who.Kind = s.lead.ID(), tool.KindLead
	}
	return who
}
