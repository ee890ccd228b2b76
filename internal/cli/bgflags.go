package cli

import (
	"strings"

	"github.com/spf13/pflag"
)

// notCarried are the flags a background session is not started (or
// started again) with: the command line's own (print mode, formats,
// listing), the ones that choose the conversation or the directory
// (respawn resumes the conversation in the recorded directory), and
// --bg's own, whose effect is in the record (its name and worktree).
var notCarried = map[string]bool{
	"bg": true, "bg-run": true, "worktree": true, "name": true, "cwd": true,
	"resume": true, "continue": true, "session-id": true, "fork-session": true,
	"print": true, "output-format": true, "input-format": true, "replay-user-messages": true,
	"permission-prompt-tool": true, "permission-prompt-timeout": true, "include-partial-messages": true,
	"json": true, "all": true, "definitions": true, "version": true, "help": true,
}

// aliasOf are flags that set the same list as another: when both are
// given, the list is carried once.
var aliasOf = map[string]string{"allowed-tools": "allowedTools", "disallowed-tools": "disallowedTools"}

// sessionFlags are the flags given on this command line that describe the
// session (model, permission mode, tools, directories, settings…), as
// arguments that set them again: one --name=value each, a list flag once
// per value. A background session records them and is started again with
// them (respawn); the agents view starts new sessions with its own.
func sessionFlags(fs *pflag.FlagSet) []string {
	if fs == nil {
		return nil
	}
	var out []string
	fs.Visit(func(f *pflag.Flag) {
		if notCarried[f.Name] || (aliasOf[f.Name] != "" && fs.Changed(aliasOf[f.Name])) {
			return
		}
		switch v := f.Value.(type) {
		case pflag.SliceValue:
			for _, s := range v.GetSlice() {
				out = append(out, "--"+f.Name+"="+s)
			}
		case backendsValue:
			for _, kv := range strings.Split(v.String(), ",") {
				out = append(out, "--"+f.Name+"="+kv)
			}
		default:
			out = append(out, "--"+f.Name+"="+f.Value.String())
		}
	})
	return out
}
