package search

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/tool"
)

// Backend selects how Grep searches.
type Backend int

const (
	// BackendAuto uses rg when it is on PATH and the Go search otherwise.
	BackendAuto Backend = iota
	// BackendGo always uses the Go search.
	BackendGo
	// BackendRipgrep always uses rg; calls fail if it is missing.
	BackendRipgrep
)

// GrepConfig configures Grep. Zero values take the defaults.
type GrepConfig struct {
	Backend Backend
	// Ripgrep is the rg binary; empty looks "rg" up in PATH.
	Ripgrep string
	// Timeout bounds one search (60 s).
	Timeout time.Duration
	// MaxOutput caps the text returned to the model (30,000 bytes).
	MaxOutput int
	// MaxLineChars cuts longer lines in content mode (500 characters).
	MaxLineChars int
	// Sandbox, when set, confines the rg process: given the calling
	// agent's working directory, it returns the sandbox's launcher for
	// commands that only read, in which what Read deny rules cover is
	// hidden. When it fails, the Go backend searches instead (it leaves
	// denied files out too, without the kernel's help). Nil runs rg as a
	// plain child.
	Sandbox func(ctx context.Context, cwd string) (launcher proc.Launcher, env []string, err error)
}

// NewGrep returns the Grep tool. Searching changes nothing, so its calls
// are read-only and concurrency-safe. Safe for concurrent use.
func NewGrep(cfg GrepConfig) tool.Tool {
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = 30_000
	}
	if cfg.MaxLineChars <= 0 {
		cfg.MaxLineChars = 500
	}
	g := &grepper{cfg: cfg}
	return tool.New(tool.Spec[grepInput]{Name: "Grep", Description: grepDescription, Input: grepSchema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true}, Run: g.run})
}

// grepper is Grep's state: its settings and where rg was found.
type grepper struct {
	cfg    GrepConfig
	rgOnce sync.Once
	rgPath string
	// rgStalled is set when an rg search ran into the deadline: rg opens
	// ignore files with a blocking open, so one that is a FIFO (made
	// where the sandbox did not refuse it) holds every later rg search
	// until its deadline too. The Go backend, which skips FIFOs, takes
	// over for the tool's life, and the first stop says so once.
	rgStalled atomic.Bool
}

const grepDescription = `Searches file contents with a regular expression, with ripgrep's behaviour.

- pattern uses ripgrep's regex syntax (e.g. "log.*Error", "func\\s+\\w+"). Literal braces and other metacharacters need escaping: "interface\\{\\}" finds interface{}.
- Hidden files, binary files and files ignored by .gitignore, .ignore or .rgignore are skipped.
- To filter files, type (e.g. "go", "py", "rust") is faster than glob for standard languages.
- Use Grep rather than grep or rg through Bash: it respects ignore files and keeps the output in a form you can page through (head_limit, offset). For open-ended searches that need several rounds, consider delegating to an agent.`

var grepSchema = tool.Object(
	tool.Required("pattern", tool.String("The regular expression to search for.")),
	tool.Optional("path", tool.String("File or directory to search in (default: the working directory).")),
	tool.Optional("glob", tool.String(`Glob to filter files, e.g. "*.js", "*.{ts,tsx}"; prefix with ! to exclude ("!*_test.go"). Several globs can be separated by spaces.`)),
	tool.Optional("output_mode", tool.Enum(`"content" shows matching lines, "files_with_matches" (default) lists files, most recently modified first, "count" counts matching lines per file.`,
		"content", "files_with_matches", "count")),
	tool.Optional("-A", tool.Integer("Lines of context to show after each match (content mode).").WithMin(0)),
	tool.Optional("-B", tool.Integer("Lines of context to show before each match (content mode).").WithMin(0)),
	tool.Optional("-C", tool.Integer("Lines of context to show before and after each match (content mode).").WithMin(0)),
	tool.Optional("context", tool.Integer("Same as -C.").WithMin(0)),
	tool.Optional("-n", tool.Boolean("Show line numbers (content mode; default true).")),
	tool.Optional("-i", tool.Boolean("Search case-insensitively.")),
	tool.Optional("type", tool.String(`File type to search, e.g. "go", "py", "js", "ts", "rust", "java", "md".`)),
	tool.Optional("head_limit", tool.Integer("Show only the first N lines or entries of the result (0: all).").WithMin(0)),
	tool.Optional("offset", tool.Integer("Skip the first N lines or entries of the result.").WithMin(0)),
	tool.Optional("multiline", tool.Boolean("Let matches span lines; \".\" then matches line breaks too (default false).")),
)

type grepInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	OutputMode string `json:"output_mode"`
	After      *int   `json:"-A"`
	Before     *int   `json:"-B"`
	C          *int   `json:"-C"`
	Context    *int   `json:"context"`
	LineNums   *bool  `json:"-n"`
	IgnoreCase bool   `json:"-i"`
	Type       string `json:"type"`
	HeadLimit  int    `json:"head_limit"`
	Offset     int    `json:"offset"`
	Multiline  bool   `json:"multiline"`
}

// Output modes.
const (
	modeContent = "content"
	modeFiles   = "files_with_matches"
	modeCount   = "count"
)

// query is a validated search, independent of the backend.
type query struct {
	pattern     string
	root        string // absolute and clean
	rootIsFile  bool
	globs       []string
	mode        string
	before      int
	after       int
	lineNumbers bool
	ignoreCase  bool
	fileType    string
	multiline   bool
	// maxRaw bounds the raw output a backend collects before stopping.
	maxRaw int
	// denied reports files Read deny rules cover (nil: none apply); the
	// backends leave them out.
	denied func(path string) bool
}

// backend runs a query and returns ripgrep's output for it (no heading,
// sorted by path, no colour). truncated reports it stopped at q.maxRaw.
type backend interface {
	search(ctx context.Context, q *query) (out []byte, truncated bool, err error)
}

func (g *grepper) run(ctx context.Context, env *tool.Env, in grepInput) (tool.Result, error) {
	q, err := g.query(env, in)
	if err != nil {
		return tool.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	b, err := g.backend(ctx, env)
	if err != nil {
		return tool.Result{}, err
	}
	raw, truncated, err := b.search(ctx, q)
	if err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) && !errors.As(err, new(tool.Failure)) {
			if _, rg := b.(rgBackend); rg && g.cfg.Backend != BackendRipgrep && !g.rgStalled.Swap(true) {
				return tool.Result{}, tool.Failf("the search took longer than %s and was stopped; ripgrep waits forever on a FIFO or device named .gitignore, .ignore or .rgignore, so from now on searches use Cohort's own search, which skips them; try again, or narrow it with path, glob or type", g.cfg.Timeout)
			}
			return tool.Result{}, tool.Failf("the search took longer than %s and was stopped; narrow it with path, glob or type", g.cfg.Timeout)
		}
		return tool.Result{}, err
	}
	text, resp := g.present(q, in, raw, truncated)
	res := tool.Text(text)
	res.Response = resp
	return res, nil
}

// query validates the input and resolves defaults.
func (g *grepper) query(env *tool.Env, in grepInput) (*query, error) {
	q := &query{pattern: in.Pattern, mode: in.OutputMode, ignoreCase: in.IgnoreCase, fileType: in.Type,
		multiline: in.Multiline, maxRaw: 8 << 20}
	if q.mode == "" {
		q.mode = modeFiles
	}
	root, err := tool.ResolvePath(env, in.Path)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, tool.Failf("path %s does not exist or cannot be read: %v", root, unwrapPath(err))
	}
	q.root, q.rootIsFile = root, !info.IsDir()
	if env.DeniedRead(root) {
		return nil, tool.Failf("%s is covered by a Read deny rule (or cannot be checked against one); it cannot be searched", root)
	}
	if env != nil && env.Access != nil {
		q.denied = env.DeniedRead
	}
	ctxLines := pick(in.Context, pick(in.C, 0))
	q.before, q.after = pick(in.Before, ctxLines), pick(in.After, ctxLines)
	q.lineNumbers = in.LineNums == nil || *in.LineNums
	q.globs = splitGlobs(in.Glob)
	if _, err := newOverrides(q.globs); err != nil {
		return nil, tool.Failf("%v", err)
	}
	if _, err := newTypeMatcher(q.fileType); err != nil {
		return nil, tool.Failf("%v", err)
	}
	if _, err := compilePattern(q); err != nil {
		return nil, err
	}
	return q, nil
}

func pick(p *int, def int) int {
	if p != nil {
		return *p
	}
	return def
}

// splitGlobs splits the glob field on whitespace and on commas outside
// braces, so "*.ts *.tsx", "*.ts,*.tsx" and "*.{ts,tsx}" all work.
func splitGlobs(s string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if part := strings.TrimSpace(s[start:end]); part != "" {
			out = append(out, part)
		}
		start = end + 1
	}
	for i, c := range s {
		switch {
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n'):
			flush(i)
		}
	}
	flush(len(s))
	return out
}

// compilePattern compiles the pattern as the Go backend uses it. Both
// backends call it first, so a bad pattern fails the same way everywhere.
func compilePattern(q *query) (*regexp.Regexp, error) {
	parsed, err := syntax.Parse(q.pattern, syntax.Perl)
	if err != nil {
		return nil, tool.Failf("invalid regular expression %q: %v", q.pattern, err)
	}
	if !q.multiline && matchesNewline(parsed) {
		return nil, tool.Failf("the pattern %q contains a line break; set multiline to true to match across lines", q.pattern)
	}
	flags := ""
	if q.ignoreCase {
		flags += "i"
	}
	if q.multiline {
		flags += "ms"
	}
	src := q.pattern
	if flags != "" {
		src = "(?" + flags + ")" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, tool.Failf("invalid regular expression %q: %v", q.pattern, err)
	}
	return re, nil
}

// matchesNewline reports whether the pattern contains a literal line
// break, which ripgrep refuses outside multiline mode.
func matchesNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if matchesNewline(sub) {
			return true
		}
	}
	return false
}

func (g *grepper) backend(ctx context.Context, env *tool.Env) (backend, error) {
	if g.cfg.Backend == BackendGo {
		return goBackend{}, nil
	}
	p := g.ripgrep()
	switch {
	case g.rgStalled.Load():
		return goBackend{}, nil
	case p == "" && g.cfg.Backend == BackendRipgrep:
		return nil, errors.New("grep: ripgrep (rg) is required by the configuration but was not found")
	case p == "":
		return goBackend{}, nil
	case g.cfg.Sandbox == nil:
		return rgBackend{path: p}, nil
	}
	cwd, err := env.WorkDir()
	if err != nil {
		return goBackend{}, nil
	}
	l, vars, err := g.cfg.Sandbox(ctx, cwd)
	if err != nil {
		return goBackend{}, nil // it leaves denied files out on its own
	}
	return rgBackend{path: p, launcher: l, env: vars}, nil
}

func (g *grepper) ripgrep() string {
	g.rgOnce.Do(func() {
		name := g.cfg.Ripgrep
		if name == "" {
			name = "rg"
		}
		if p, err := exec.LookPath(name); err == nil {
			g.rgPath = p
		}
	})
	return g.rgPath
}
