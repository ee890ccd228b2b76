package permission

import (
	"strings"

	"github.com/cohort-dev/cohort/shellcmd"
)

// safeEnv are environment variables that cannot change which program runs
// or make a program run other code. Setting any other variable for a
// command (PATH, LD_PRELOAD, GIT_SSH_COMMAND, PAGER, NODE_OPTIONS, ...)
// keeps the command from being auto-allowed: the list is an allow list on
// purpose, because the dangerous ones cannot all be enumerated.
var safeEnv = map[string]bool{
	"NODE_ENV": true, "RAILS_ENV": true, "RACK_ENV": true, "APP_ENV": true, "FLASK_ENV": true,
	"DEBUG": true, "CI": true, "TZ": true, "LANG": true, "LANGUAGE": true, "NO_COLOR": true,
	"FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true, "COLUMNS": true, "LINES": true,
	"TERM": true, "COLORTERM": true, "RUST_LOG": true, "RUST_BACKTRACE": true, "GOOS": true,
	"GOARCH": true, "CGO_ENABLED": true, "GOMAXPROCS": true, "GOTRACEBACK": true,
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONHASHSEED": true,
	"PYTHONIOENCODING": true, "NODE_NO_WARNINGS": true, "LOG_LEVEL": true, "VERBOSE": true,
}

func safeEnvVar(name string) bool {
	return safeEnv[name] || strings.HasPrefix(name, "LC_")
}

// specialLower are lower-case names some shells tie to the search path.
var specialLower = map[string]bool{"path": true, "cdpath": true, "fpath": true, "module_path": true, "manpath": true}

// safeShellVar reports whether assigning a shell variable (not exported to
// a command) is harmless: lower-case names are script-local by convention
// (but not zsh's path arrays or npm_config_*), upper-case ones may already
// be exported and change later commands unless they are on the safe list.
func safeShellVar(name string) bool {
	if safeEnvVar(name) {
		return true
	}
	if name == "" || specialLower[name] || strings.HasPrefix(name, "npm_config_") {
		return false
	}
	return strings.ToLower(name) == name && shellcmd.IsName(name)
}

// assignProblem says why setting a variable keeps a line from being
// auto-allowed, or "" when it is harmless. Variables set for a command
// (NAME=value cmd, env, sudo) or exported reach programs and must be on
// the safe list; shell variables must pass safeShellVar.
func assignProblem(as *shellcmd.Assignment) string {
	switch as.Builtin {
	case "read", "mapfile", "readarray", "getopts":
		if !safeShellVar(as.Name) {
			return as.Builtin + " may assign " + as.Name + ", which can change what later commands run"
		}
		return ""
	case "printf":
		if !safeShellVar(as.Name) {
			return "printf -v assigns " + as.Name + ", which can change what later commands run"
		}
		return ""
	}
	exported := as.Prefix || as.Builtin == "export" || as.Builtin == "declare" || as.Builtin == "typeset"
	switch {
	case exported && !safeEnvVar(as.Name):
		return "setting " + as.Name + " for a command can change what it runs"
	case !exported && !safeShellVar(as.Name):
		return "setting " + as.Name + " can change what later commands run"
	}
	return ""
}
