package permission

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Pather is implemented by tools outside the built-in table that touch
// files, so the engine can fill Request.Paths for them.
type Pather interface {
	// PermissionPaths returns the paths a call reads or writes, as given
	// (relative paths resolve against the agent's cwd).
	PermissionPaths(input json.RawMessage) ([]string, error)
}

// PathsOf returns the paths a call of a built-in file tool touches: Read,
// Write, Edit and MultiEdit use file_path, NotebookEdit notebook_path, LS
// path,
// Glob and Grep path (the cwd when absent; Glob also the fixed directory
// at the start of its pattern, which may point elsewhere). ok is false for
// tools that are not file tools.
func PathsOf(tool string, input json.RawMessage) (paths []string, ok bool, err error) {
	var in struct {
		FilePath     *string `json:"file_path"`
		NotebookPath *string `json:"notebook_path"`
		Path         *string `json:"path"`
		Pattern      *string `json:"pattern"`
	}
	if !pathTool(tool) {
		return nil, false, nil
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, true, fmt.Errorf("%s input is not a JSON object: %v", tool, err)
	}
	required := func(field string, v *string) ([]string, bool, error) {
		if v == nil || *v == "" {
			return nil, true, fmt.Errorf("%s input has no %s", tool, field)
		}
		return []string{*v}, true, nil
	}
	switch tool {
	case "NotebookEdit":
		return required("notebook_path", in.NotebookPath)
	case "LS":
		return required("path", in.Path)
	case "Glob", "Grep":
		base := "."
		if in.Path != nil && *in.Path != "" {
			base = *in.Path
		}
		paths = []string{base}
		if tool == "Glob" && in.Pattern != nil {
			if dir := globBase(*in.Pattern); dir != "" {
				if !filepath.IsAbs(dir) {
					dir = base + "/" + dir
				}
				paths = append(paths, dir)
			}
		}
		return paths, true, nil
	}
	return required("file_path", in.FilePath)
}

// globBase returns the leading directories of a glob pattern that contain
// no wildcard ("../../etc" for "../../etc/*.conf"), or "".
func globBase(pattern string) string {
	parts := strings.Split(pattern, "/")
	var fixed []string
	for _, p := range parts[:len(parts)-1] {
		if strings.ContainsAny(p, "*?[{") {
			break
		}
		fixed = append(fixed, p)
	}
	if len(fixed) == 0 {
		return ""
	}
	if fixed[0] == "" {
		return "/" + strings.Join(fixed[1:], "/")
	}
	return strings.Join(fixed, "/")
}

// commandOf returns the command of a Bash call.
func commandOf(input json.RawMessage) (string, error) {
	var in struct {
		Command *string `json:"command"`
	}
	if err := json.Unmarshal(input, &in); err != nil || in.Command == nil {
		return "", fmt.Errorf("Bash input has no command")
	}
	return *in.Command, nil
}

// hostOf returns the lower-case host of a WebFetch call's url.
func hostOf(input json.RawMessage) (string, error) {
	var in struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(input, &in); err != nil || in.URL == "" {
		return "", fmt.Errorf("WebFetch input has no url")
	}
	u, err := url.Parse(in.URL)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("WebFetch url %q has no host", in.URL)
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), nil
}

// agentTypeOf returns the subagent_type of an Agent call
// ("general-purpose" when omitted).
func agentTypeOf(input json.RawMessage) string {
	var in struct {
		SubagentType string `json:"subagent_type"`
	}
	_ = json.Unmarshal(input, &in)
	if in.SubagentType == "" {
		return "general-purpose"
	}
	return in.SubagentType
}

// domainMatch matches a host against "example.com" (exactly that host) or
// "*.example.com" (any subdomain, not the domain itself).
func domainMatch(rule, host string) bool {
	if sub, ok := strings.CutPrefix(rule, "*."); ok {
		return strings.HasSuffix(host, "."+sub)
	}
	return host == rule
}
