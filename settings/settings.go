package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/internal/ownread"
)

// Scope says which layer a source belongs to.
type Scope string

// The layers, lowest precedence first.
const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
	ScopeLocal   Scope = "local"
	ScopeCLI     Scope = "cli"
)

// Source is one settings file (or command-line document) and what was read
// from it. Sources are immutable after Load returns and safe to share.
type Source struct {
	Scope Scope
	// Path is the file's absolute path, or a label such as "--settings" for
	// a document that did not come from a file.
	Path string
	// Root is the directory that a rule path starting with a single "/"
	// resolves against: the project directory (the one holding .cohort/ or
	// .claude/) for project and local files, the directory holding the file
	// for user files, the working directory for the command line.
	Root string
	// Broken is set when the file exists but could not be read or parsed;
	// nothing from it is used except that Permissions reports it as
	// incomplete.
	Broken bool
	// Untrusted, when set, says why the file is not obeyed as written: it
	// lies where an agent's commands could write and no person approved
	// its content (internal/configtrust). Only its permission deny and ask
	// rules (and disableBypassPermissionsMode) are read.
	Untrusted string
	// Approved is set on a file obeyed only because a person approved its
	// exact content (internal/configtrust): it lies where an agent's
	// commands could write. The approval does not cover the programs the
	// file names, so its "sandbox": false keys are not honoured.
	Approved bool

	data []byte
	tree *node
	perm Permissions
}

// Text is a string value with its position in the source file (Line 0 when
// unknown, e.g. for command-line values).
type Text struct {
	Value     string
	Line, Col int
}

// Sourced is a value together with the source that set it and where.
type Sourced[T any] struct {
	Value     T
	Source    *Source
	Line, Col int
}

// Problem is something wrong with a settings file: it says which file,
// where, what and what to do. Problems are warnings: Load skips what it
// cannot use and carries on.
type Problem struct {
	Path      string
	Line, Col int
	// Key is the JSON path of the offending value, e.g. "permissions.deny[2]".
	Key string
	Msg string
}

func (p *Problem) Error() string {
	loc := p.Path
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", p.Path, p.Line, p.Col)
	}
	if p.Key != "" {
		return loc + ": " + p.Key + ": " + p.Msg
	}
	return loc + ": " + p.Msg
}

// Settings is the loaded set of sources, lowest precedence first. Safe for
// concurrent reads; Add must not run concurrently with anything else.
type Settings struct {
	Sources  []*Source
	Problems []*Problem
}

// Load reads every settings file Env points at (see the package doc for
// the list and order). It never fails: unreadable or invalid files become
// Problems and broken Sources.
func Load(env Env) *Settings {
	s := &Settings{}
	seen := map[string]bool{}
	add := func(scope Scope, path, root string) {
		if seen[path] || (env.Scopes != nil && !slices.Contains(env.Scopes, scope)) {
			return
		}
		seen[path] = true
		dir := root
		if scope == ScopeUser && filepath.Base(root) == ".claude" {
			dir = filepath.Dir(root) // ~/.claude lies in the home directory
		}
		s.addFile(scope, path, root, dir, env.Trust)
	}
	if env.ClaudeCompat && env.Home != "" {
		dir := filepath.Join(env.Home, ".claude")
		add(ScopeUser, filepath.Join(dir, "settings.json"), dir)
	}
	if env.CohortHome != "" {
		add(ScopeUser, filepath.Join(env.CohortHome, "settings.json"), env.CohortHome)
	}
	for _, scope := range []Scope{ScopeProject, ScopeLocal} {
		name := "settings.json"
		if scope == ScopeLocal {
			name = "settings.local.json"
		}
		for _, dir := range env.projectDirs() {
			if env.ClaudeCompat {
				add(scope, filepath.Join(dir, ".claude", name), dir)
			}
			add(scope, filepath.Join(dir, ".cohort", name), dir)
		}
	}
	return s
}

func (s *Settings) addFile(scope Scope, path, root, dir string, trust *configtrust.Book) {
	data, err := ownread.Config(path, 0) // a FIFO planted as a settings file must not hang the start
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if dir := filepath.Dir(path); errors.Is(err, syscall.ENOTDIR) && !isDir(dir) {
		// .claude or .cohort is a file: it holds no settings file, so no
		// rule of this layer is missing (see the package doc).
		if !slices.ContainsFunc(s.Problems, func(p *Problem) bool { return p.Path == dir }) {
			s.Problems = append(s.Problems, &Problem{Path: dir,
				Msg: "is not a directory, so it holds no settings files and none are read from it; remove it (then a settings directory of that name can be made there)"})
		}
		return
	}
	if err == nil {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			err = errors.New("is a directory")
		}
	}
	if err != nil {
		s.Sources = append(s.Sources, &Source{Scope: scope, Path: path, Root: root, Broken: true,
			perm: Permissions{Incomplete: true}})
		s.Problems = append(s.Problems, &Problem{Path: path,
			Msg: fmt.Sprintf("cannot read settings file: %v; fix its permissions or remove it (until then Cohort asks before every tool call)", err)})
		return
	}
	if v := trust.Check(dir, path, data); v != nil {
		s.add(scope, path, root, data, v.Why())
		return
	}
	s.Add(scope, path, root, data).Approved = trust.ByApproval(dir, path, data)
}

// isDir reports whether path is a directory (a link to one counts).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// Add parses one more document at the highest precedence so far (the
// command line's --settings, for example). path labels it in messages;
// root is what "/pattern" rules in it resolve against.
func (s *Settings) Add(scope Scope, path, root string, data []byte) *Source {
	return s.add(scope, path, root, data, "")
}

// add is Add for a file obeyed only in part when untrusted says why (see
// Source.Untrusted).
func (s *Settings) add(scope Scope, path, root string, data []byte, untrusted string) *Source {
	src := &Source{Scope: scope, Path: path, Root: root, data: data, Untrusted: untrusted}
	s.Sources = append(s.Sources, src)
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF")) // a BOM some editors write
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	src.data = data
	tree, dups, err := parseTree(data)
	if err == nil && tree.kind != '{' {
		err = &posError{off: tree.start, msg: "the top level must be a JSON object ({...}), not " + tree.kindName()}
	}
	if err != nil {
		var pe *posError
		errors.As(err, &pe)
		line, col := lineCol(data, pe.off)
		s.Problems = append(s.Problems, &Problem{Path: path, Line: line, Col: col,
			Msg: "invalid JSON: " + pe.msg + "; fix the file (it is ignored, and Cohort asks before every tool call until it is fixed)"})
		src.Broken = true
		src.perm = Permissions{Incomplete: true}
		return src
	}
	if untrusted != "" {
		restrictOnly(tree)
		s.Problems = append(s.Problems, &Problem{Path: path,
			Msg: untrusted + " (until then only its permission deny and ask rules apply; nothing else in it is read)"})
	}
	src.tree = tree
	for _, d := range dups {
		line, col := lineCol(data, d.off)
		s.Problems = append(s.Problems, &Problem{Path: path, Line: line, Col: col, Key: d.key,
			Msg: "duplicate key; only the last one counts — merge them into one"})
	}
	src.perm = s.readPermissions(src)
	return src
}

// restrictOnly keeps of a settings tree only what restricts: the
// permission deny and ask rules and disableBypassPermissionsMode.
func restrictOnly(tree *node) {
	keep := func(n *node, names ...string) {
		fields := map[string]*node{}
		var keys []string
		for _, k := range n.keys {
			if slices.Contains(names, k) && n.fields[k] != nil {
				fields[k] = n.fields[k]
				keys = append(keys, k)
			}
		}
		n.fields, n.keys = fields, keys
	}
	keep(tree, "permissions")
	if p := tree.fields["permissions"]; p != nil && p.kind == '{' {
		keep(p, "deny", "ask", "disableBypassPermissionsMode")
	}
}

// Section returns the raw value of a top-level key from every source that
// sets it, lowest precedence first.
func (s *Settings) Section(key string) []Sourced[json.RawMessage] {
	var out []Sourced[json.RawMessage]
	for _, src := range s.Sources {
		if n := src.field(key); n != nil {
			line, col := lineCol(src.data, n.start)
			out = append(out, Sourced[json.RawMessage]{Value: n.raw(src.data), Source: src, Line: line, Col: col})
		}
	}
	return out
}

func (src *Source) field(key string) *node {
	if src == nil || src.tree == nil {
		return nil
	}
	return src.tree.fields[key]
}

// problemAt builds a Problem positioned at n.
func (src *Source) problemAt(n *node, key, msg string) *Problem {
	p := &Problem{Path: src.Path, Key: key, Msg: msg}
	if n != nil {
		p.Line, p.Col = lineCol(src.data, n.start)
	}
	return p
}
