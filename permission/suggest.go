package permission

import (
	"path/filepath"
	"slices"
	"strings"
)

// subcommandTools take a subcommand worth naming in a suggested rule
// ("git push:*" rather than "git:*").
var subcommandTools = map[string]bool{
	"git": true, "npm": true, "yarn": true, "pnpm": true, "bun": true, "go": true, "cargo": true,
	"docker": true, "kubectl": true, "gh": true, "terraform": true, "helm": true, "dotnet": true,
	"pip": true, "uv": true, "poetry": true, "deno": true, "mvn": true, "gradle": true,
}

// suggestBashRule returns a prefix rule that would allow a command like
// this one ("Bash(git push:*)"), or "" when no safe suggestion exists.
func suggestBashRule(words []string) string {
	if len(words) == 0 || words[0] == dynWord || isGlob(words[0]) || strings.Contains(words[0], "/") || strings.ContainsAny(words[0], "()") {
		return ""
	}
	prefix := words[0]
	if subcommandTools[prefix] && len(words) > 1 && !strings.HasPrefix(words[1], "-") && words[1] != dynWord && !isGlob(words[1]) &&
		!strings.ContainsAny(words[1], " ()*\t") {
		prefix += " " + words[1]
	}
	return prefix + ":*"
}

// suggest returns updates that would make this call pass next time.
func (e *evaluation) suggest() []RuleUpdate {
	tool := e.req.Tool
	add := func(vals ...RuleValue) []RuleUpdate {
		return []RuleUpdate{{Type: UpdateAddRules, Behavior: Allow, Destination: DestLocal, Rules: vals}}
	}
	switch {
	case tool == "Bash" && e.bash != nil:
		var vals []RuleValue
		allows := e.rulesFor(Allow, e.bashCovers)
		for _, c := range e.bash.commands {
			// A command a rule already allows needs no second rule: the
			// user is offered only what is still missing.
			if e.readOnlyOK(c) || e.allowRuleFor(c, allows) != nil {
				continue
			}
			if s := suggestBashRule(c.inner().words); s != "" {
				v := RuleValue{ToolName: "Bash", RuleContent: s}
				if !slices.Contains(vals, v) {
					vals = append(vals, v)
				}
			}
		}
		if len(vals) == 0 {
			return nil
		}
		return add(vals...)
	case editTools[tool]:
		return []RuleUpdate{{Type: UpdateSetMode, Mode: ModeAcceptEdits, Destination: DestSession}}
	case readTools[tool]:
		paths, _, err := PathsOf(tool, e.req.Input)
		if err != nil || len(paths) == 0 {
			return nil
		}
		dir := absolute(e.cwd, paths[0])
		if tool == "Read" {
			dir = filepath.Dir(dir)
		}
		return []RuleUpdate{{Type: UpdateAddDirectories, Directories: []string{filepath.Clean(dir)}, Destination: DestSession}}
	case tool == "WebFetch":
		if host, err := hostOf(e.req.Input); err == nil {
			return add(RuleValue{ToolName: tool, RuleContent: "domain:" + host})
		}
		return nil
	case tool == "Agent":
		return add(RuleValue{ToolName: tool, RuleContent: agentTypeOf(e.req.Input)})
	}
	return add(RuleValue{ToolName: tool})
}
