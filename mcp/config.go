package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/settings"
)

// Where a server's configuration comes from. A project server (.mcp.json,
// or mcpServers in a project settings file) runs only once the user has
// approved it; the others count as approved.
const (
	ScopeProject = "project" // .mcp.json, or a project settings file
	ScopeUser    = "user"    // mcpServers in a user settings file
	ScopeLocal   = "local"   // mcpServers in a settings.local.json
	ScopeCLI     = "cli"     // --mcp-config, or a --settings layer
	ScopeAgent   = "agent"   // an agent definition's mcpServers
	ScopeSDK     = "sdk"     // a server in the program that hosts the session (the Agent SDK's host)
)

// Transport types (Claude Code's "type" field).
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	// TypeSDK is a server reached through Spec.Transport, in the program
	// that hosts the session (never from a configuration file).
	TypeSDK = "sdk"
)

// Spec is one MCP server's configuration, in Claude Code's format: stdio
// (command, args, env) or streamable HTTP (url, headers).
type Spec struct {
	Name    string            `json:"-"`
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Sandbox is the definition's "sandbox" key (nil when absent): false
	// asks that a stdio server run outside the session's sandbox, which
	// Unconfined grants only to definitions from files the model cannot
	// write (see "The sandbox" in the package doc).
	Sandbox *bool `json:"sandbox,omitempty"`
	// Transport reaches a TypeSDK server.
	Transport sdk.Transport `json:"-"`

	// Scope is where the configuration comes from (ScopeProject, …);
	// Source names the file and line ("/p/.mcp.json:3"), for messages.
	Scope  string `json:"-"`
	Source string `json:"-"`
	// Approved is set on a server from a file obeyed only as a person
	// approved its content (settings.Source.Approved): the file lies where
	// agents' commands write, and so may the program it names, so its
	// "sandbox": false is not honoured.
	Approved bool `json:"-"`
	// Disabled servers are reported and never started: a project server
	// the user has not approved (Reason says so and what to do).
	Disabled bool   `json:"-"`
	Reason   string `json:"-"`
	// Fingerprint identifies what the server runs, as configured (before
	// ${VAR} expansion): its type, command, args, env, URL and headers,
	// and "sandbox": false when it is there. A project server's approval
	// is for one fingerprint.
	Fingerprint string `json:"-"`
}

// fingerprint hashes what a server runs: the fields that say which
// program starts with which arguments and environment, or which URL is
// called with which headers (maps marshal with sorted keys), and whether
// it asks to run outside the sandbox. A definition without "sandbox":
// false hashes as it did before the key existed, so approvals recorded
// then still hold; adding the key changes the hash, and asks again.
func fingerprint(s Spec) string {
	data, _ := json.Marshal(struct {
		Type        string            `json:"type"`
		Command     string            `json:"command"`
		Args        []string          `json:"args"`
		Env         map[string]string `json:"env"`
		URL         string            `json:"url"`
		Headers     map[string]string `json:"headers"`
		Unsandboxed bool              `json:"unsandboxed,omitempty"`
	}{s.Type, s.Command, s.Args, s.Env, s.URL, s.Headers, s.optsOut()})
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// validName is what Claude Code accepts as a server name; it becomes part
// of every tool name (mcp__<server>__<tool>).
var validName = lazyre.New(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether name can name a server.
func ValidName(name string) bool { return validName.MatchString(name) }

// Parse reads a document {"mcpServers": {name: spec}} (the format of
// .mcp.json and --mcp-config). path labels messages; scope is recorded in
// each Spec. Every problem names the file and line and what to do; a
// server with a problem is left out, the others still load. getenv expands
// ${VAR} and ${VAR:-default} in commands, arguments, env values, URLs and
// headers, as Claude Code does.
func Parse(path, scope string, data []byte, getenv func(string) string) ([]Spec, []error) {
	s := &settings.Settings{}
	if src := s.Add(settings.ScopeCLI, path, filepath.Dir(path), data); src.Broken {
		// The settings loader's advice is about permissions; here the
		// consequence is that nothing the file names starts.
		var errs []error
		for _, p := range s.Problems {
			q := *p
			q.Msg, _, _ = strings.Cut(q.Msg, "; fix the file")
			q.Msg += "; fix the file: none of the MCP servers it names is started until it parses"
			errs = append(errs, &q)
		}
		return nil, errs
	}
	specs, errs := servers(s, "mcpServers", scope, getenv)
	return specs, append(problems(s.Problems), errs...)
}

// FromSettings reads the mcpServers of every settings source, lowest
// precedence first, a later source's server replacing an earlier one of
// the same name. A server from a project settings file (settings.json in
// the repository) is ScopeProject and needs approval like one in
// .mcp.json; user and local files and --settings layers are trusted.
func FromSettings(s *settings.Settings, getenv func(string) string) ([]Spec, []error) {
	return servers(s, "mcpServers", "", getenv)
}

// servers decodes the object key of every source of s; an empty scope is
// taken from each source.
func servers(s *settings.Settings, key, scope string, getenv func(string) string) ([]Spec, []error) {
	raw, probs := settings.MergeObject[json.RawMessage](s, key)
	errs := problems(probs)
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []Spec
	for _, name := range names {
		v := raw[name]
		where := fmt.Sprintf("%s:%d", v.Source.Path, v.Line)
		sc := scope
		if sc == "" {
			sc = scopeOf(v.Source.Scope)
		}
		spec, err := decodeSpec(name, v.Value, getenv)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: MCP server %q: %v; the server is not started", where, name, err))
			continue
		}
		spec.Scope, spec.Source, spec.Approved = sc, where, v.Source.Approved
		out = append(out, spec)
	}
	return out, errs
}

func scopeOf(s settings.Scope) string {
	switch s {
	case settings.ScopeProject:
		return ScopeProject
	case settings.ScopeLocal:
		return ScopeLocal
	case settings.ScopeCLI:
		return ScopeCLI
	default:
		return ScopeUser
	}
}

// Decode reads one server's configuration (an agent definition's inline
// mcpServers entry, for example); where labels messages.
func Decode(name string, v any, scope, where string, getenv func(string) string) (Spec, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: MCP server %q: %v", where, name, err)
	}
	spec, err := decodeSpec(name, data, getenv)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: MCP server %q: %v", where, name, err)
	}
	spec.Scope, spec.Source = scope, where
	return spec, nil
}

func decodeSpec(name string, data json.RawMessage, getenv func(string) string) (Spec, error) {
	if !validName.MatchString(name) {
		return Spec{}, fmt.Errorf("the name may hold only letters, digits, _ and - (at most 64); rename it")
	}
	var spec Spec
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return Spec{}, fmt.Errorf("%v; a server is {\"command\": …, \"args\": […], \"env\": {…}} or {\"type\": \"http\", \"url\": …, \"headers\": {…}}", err)
	}
	spec.Name = name
	if spec.Type == "" {
		spec.Type = TypeStdio
		if spec.Command == "" && spec.URL != "" {
			spec.Type = TypeHTTP
		}
	}
	switch spec.Type {
	case TypeStdio:
		if spec.Command == "" {
			return Spec{}, fmt.Errorf("a stdio server needs a \"command\"")
		}
	case TypeHTTP:
		if spec.URL == "" {
			return Spec{}, fmt.Errorf("an http server needs a \"url\"")
		}
	case "sse":
		return Spec{}, fmt.Errorf("the deprecated SSE transport is not supported; use \"type\": \"http\" (streamable HTTP) if the server offers it")
	default:
		return Spec{}, fmt.Errorf("type %q is not stdio or http", spec.Type)
	}
	spec.Fingerprint = fingerprint(spec)
	if getenv != nil {
		spec.expand(getenv)
	}
	return spec, nil
}

// envRef is ${VAR} or ${VAR:-default}.
var envRef = lazyre.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

func (s *Spec) expand(getenv func(string) string) {
	ex := func(v string) string {
		return envRef.ReplaceAllStringFunc(v, func(m string) string {
			sub := envRef.FindStringSubmatch(m)
			if val := getenv(sub[1]); val != "" {
				return val
			}
			return sub[2]
		})
	}
	s.Command, s.URL = ex(s.Command), ex(s.URL)
	for i, a := range s.Args {
		s.Args[i] = ex(a)
	}
	for k, v := range s.Env {
		s.Env[k] = ex(v)
	}
	for k, v := range s.Headers {
		s.Headers[k] = ex(v)
	}
}

func problems(ps []*settings.Problem) []error {
	out := make([]error, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// ReadConfig reads one --mcp-config value: JSON text, or the paths of JSON
// files (space-separated, relative to dir), each {"mcpServers": {…}}.
// Servers named there are ScopeCLI.
func ReadConfig(v, dir string, getenv func(string) string) ([]Spec, []error) {
	t := strings.TrimSpace(v)
	if strings.HasPrefix(t, "{") {
		return Parse("--mcp-config", ScopeCLI, []byte(t), getenv)
	}
	var specs []Spec
	var errs []error
	for _, p := range strings.Fields(t) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		data, err := ownread.Config(p, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf("--mcp-config: %v; give a JSON file or a JSON object {\"mcpServers\": {…}}", err))
			continue
		}
		s, e := Parse(p, ScopeCLI, data, getenv)
		specs, errs = append(specs, s...), append(errs, e...)
	}
	return specs, errs
}
