// Package skill loads Claude Code skills — directories holding a SKILL.md
// (YAML frontmatter name, description, optional allowed-tools; a Markdown
// body of instructions) and any files the instructions refer to — and
// offers them to agents through the Skill tool and an agent definition's
// skills: field.
//
// Design decisions the spec leaves open:
//
//   - Skills are found in <dir>/<name>/SKILL.md for each directory Load
//     is given, lowest precedence first (Cohort passes ~/.claude/skills,
//     $COHORT_HOME/skills, then the project's .claude/skills and
//     .cohort/skills); a later skill replaces an earlier one of the same
//     name. The catalog is read once, at session start: the Skill tool's
//     description lists the skills and is part of the cached prompt.
//   - A name is what Claude Code accepts: lower-case letters, digits and
//     hyphens, at most 64 characters. A SKILL.md without frontmatter, with a
//     bad or missing name or without a description is skipped with an
//     error naming the file and line; the other skills still load.
//   - Calling Skill returns the instructions in the tool result, headed by
//     the skill's directory so the agent can read the files it bundles.
//     (Claude Code injects them as a separate message; a tool result keeps
//     the conversation's shape simple and reaches the model the same.)
//     allowed-tools is read and shown with the instructions; it grants no
//     permission: rules decide, as for every other call.
//   - A definition's skills: are preloaded as one text block per skill in
//     the agent's first user message, in the order listed; a name the
//     catalog lacks is reported, and the agent starts without it.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/internal/ownread"

	"go.yaml.in/yaml/v3"
)

// FileName is a skill's instructions file.
const FileName = "SKILL.md"

// maxFile bounds a SKILL.md.
const maxFile = 1 << 20

// Skill is one loaded skill.
type Skill struct {
	Name         string
	Description  string
	AllowedTools []string
	// Dir is the skill's directory; Path its SKILL.md.
	Dir, Path string
	// Body is the instructions: the Markdown after the frontmatter.
	Body string
}

// Error is a SKILL.md that cannot be used: its file, line and what to do.
type Error struct {
	Path    string
	Line    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s; the skill is skipped", e.Path, e.Line, e.Message)
}

var validName = lazyre.New(`^[a-z0-9][a-z0-9-]{0,63}$`)

// Parse reads one SKILL.md; path is the file's path (its directory is the
// skill's).
func Parse(path string, data []byte) (*Skill, error) {
	fail := func(line int, format string, args ...any) error {
		return &Error{Path: path, Line: line, Message: fmt.Sprintf(format, args...)}
	}
	if len(data) > maxFile {
		return nil, fail(1, "the file is %d bytes; a SKILL.md is at most %d", len(data), maxFile)
	}
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return nil, fail(1, "no YAML frontmatter: the file must start with a line \"---\", then name: and description:, then \"---\"")
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, fail(1, "the frontmatter that starts here has no closing \"---\" line")
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines[1:end], "\n")), &root); err != nil {
		line := 2
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			if n := lineOf(err.Error()); n > 0 {
				line = n + 1
			}
		}
		return nil, fail(line, "the frontmatter is not valid YAML: %v", err)
	}
	s := &Skill{Path: path, Dir: filepath.Dir(path), Body: strings.TrimSpace(strings.Join(lines[end+1:], "\n"))}
	fields := map[string]*yaml.Node{}
	if len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			fields[m.Content[i].Value] = m.Content[i+1]
		}
	}
	name, ok := fields["name"]
	switch {
	case !ok || name.Kind != yaml.ScalarNode || name.Value == "":
		return nil, fail(end+1, "the frontmatter has no name: give the skill's name (lower-case letters, digits, -)")
	case !validName.MatchString(name.Value):
		return nil, fail(name.Line+1, "name %q is not a skill name: use lower-case letters, digits and - (at most 64)", name.Value)
	}
	s.Name = name.Value
	desc, ok := fields["description"]
	if !ok || desc.Kind != yaml.ScalarNode || strings.TrimSpace(desc.Value) == "" {
		return nil, fail(end+1, "the frontmatter has no description: say what the skill does and when to use it")
	}
	s.Description = strings.TrimSpace(desc.Value)
	if at, ok := fields["allowed-tools"]; ok {
		switch at.Kind {
		case yaml.ScalarNode:
			s.AllowedTools = splitTools(at.Value)
		case yaml.SequenceNode:
			for _, n := range at.Content {
				s.AllowedTools = append(s.AllowedTools, strings.TrimSpace(n.Value))
			}
		default:
			return nil, fail(at.Line+1, "allowed-tools must be a list or a comma-separated string")
		}
	}
	return s, nil
}

func splitTools(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

var yamlLine = lazyre.New(`line (\d+)`)

func lineOf(msg string) int {
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	var n int
	fmt.Sscan(m[1], &n)
	return n
}

// Catalog is the skills of a session, by name. Immutable; safe for
// concurrent use.
type Catalog struct {
	skills []*Skill // sorted by name
}

// Load reads <dir>/*/SKILL.md for each of dirs, lowest precedence first.
// Directories that do not exist are skipped; every broken skill is an
// error naming its file and line. A SKILL.md is read as internal/ownread
// reads instructions (ownread.Text): followed through a link, but
// refused unless what it opens is a regular file outside /proc, /dev and
// /sys that no Read deny rule covers (denied; nil denies nothing), opened
// without blocking; a model that writes a skills directory could plant
// it as a link to Cohort's environment or a denied secret, or as a FIFO
// that would hang the session's start.
func Load(denied ownread.Denied, dirs ...string) (*Catalog, []error) {
	byName := map[string]*Skill{}
	var errs []error
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("skills directory %s: %v", dir, err))
			continue
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name(), FileName)
			data, err := ownread.Text(path, maxFile, denied)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
				continue
			}
			if err != nil {
				if fi, serr := os.Stat(filepath.Join(dir, e.Name())); serr == nil && !fi.IsDir() {
					continue // a file beside the skill directories
				}
				errs = append(errs, &Error{Path: path, Line: 1, Message: err.Error()})
				continue
			}
			s, err := Parse(path, data)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			byName[s.Name] = s
		}
	}
	c := &Catalog{}
	for _, s := range byName {
		c.skills = append(c.skills, s)
	}
	slices.SortFunc(c.skills, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	return c, errs
}

// All returns the skills sorted by name.
func (c *Catalog) All() []*Skill {
	if c == nil {
		return nil
	}
	return c.skills
}

// Get returns the skill called name.
func (c *Catalog) Get(name string) (*Skill, bool) {
	for _, s := range c.All() {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Instructions is what the model reads when it uses the skill: where the
// skill's files are, the tools it expects, and its instructions.
func (s *Skill) Instructions() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %q — its files are in %s (read them from there when the instructions refer to them).\n", s.Name, s.Dir)
	if len(s.AllowedTools) > 0 {
		fmt.Fprintf(&b, "Tools it expects: %s.\n", strings.Join(s.AllowedTools, ", "))
	}
	b.WriteString("\n")
	b.WriteString(s.Body)
	return b.String()
}
