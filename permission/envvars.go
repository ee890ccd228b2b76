package permission

import "strings"

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
	return strings.ToLower(name) == name && validName(name)
}
