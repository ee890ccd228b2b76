package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/llm"
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
}

// Grep is the Grep tool. Safe for concurrent use.
type Grep struct {
	cfg    GrepConfig
	rgOnce sync.Once
	rgPath string
}

// NewGrep returns the Grep tool.
func NewGrep(cfg GrepConfig) *Grep {
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = 30_000
	}
	if cfg.MaxLineChars <= 0 {
		cfg.MaxLineChars = 500
	}
	return &Grep{cfg: cfg}
}

const grepDescription = `Searches file contents with a regular expression, with ripgrep's behaviour.

- pattern uses ripgrep's regex syntax (e.g. "log.*Error", "func\\s+\\w+"). Literal braces and other metacharacters need escaping: "interface\\{\\}" finds interface{}.
- path is the file or directory to search (default: the working directory). Hidden files and files ignored by .gitignore, .ignore or .rgignore are skipped, as are binary files.
- Filter files with glob (e.g. "*.js", "*.{ts,tsx}", "!*_test.go"; several globs separated by spaces) or with type (e.g. "go", "py", "js", "rust"), which is faster for standard languages.
- output_mode: "files_with_matches" (default) lists matching files, most recently modified first; "content" shows matching lines; "count" shows how many lines match in each file.
- In content mode, -n (default true) shows line numbers, and -A, -B and -C (or context) show lines after, before or around each match.
- -i makes the search case-insensitive.
- By default a match lies within one line. Set multiline to true to let patterns span lines (then "." also matches line breaks).
- head_limit shows only the first N lines or entries and offset skips the first N, to page through large results.
- Use Grep rather than grep or rg through Bash: it respects ignore files and keeps the output in a form you can page through. For open-ended searches that need several rounds, consider delegating to an agent.`

var grepSchema = tool.Object(
	tool.Required("pattern", tool.String("The regular expression to search for.")),
	tool.Optional("path", tool.String("File or directory to search in (default: the working directory).")),
	tool.Optional("glob", tool.String(`Glob to filter files, e.g. "*.js" or "*.{ts,tsx}"; prefix with ! to exclude. Several globs can be separated by spaces.`)),
	tool.Optional("output_mode", tool.Enum(`"content" shows matching lines, "files_with_matches" (default) lists files, "count" counts matching lines per file.`,
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
).JSON()

// Def implements tool.Tool.
func (g *Grep) Def() llm.ToolDef {
	return llm.ToolDef{Name: "Grep", Description: grepDescription, InputSchema: grepSchema}
}

// Traits implements tool.Tool: searching is read-only and concurrency-safe.
func (g *Grep) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: true, ConcurrencySafe: true}
}

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
}

// backend runs a query and returns ripgrep's output for it (no heading,
// sorted by path, no colour). truncated reports it stopped at q.maxRaw.
type backend interface {
	search(ctx context.Context, q *query) (out []byte, truncated bool, err error)
}

// failure is a problem the model should read (an is_error result).
type failure string

func (f failure) Error() string { return string(f) }

func failf(format string, args ...any) error { return failure(fmt.Sprintf(format, args...)) }

// Run implements tool.Tool.
func (g *Grep) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	text, resp, err := g.run(ctx, env, input)
	var f failure
	if errors.As(err, &f) {
		return tool.Errorf("%s", string(f)), nil
	}
	if err != nil {
		return tool.Result{}, err
	}
	res := tool.Text(text)
	res.Response = resp
	return res, nil
}

func (g *Grep) run(ctx context.Context, env *tool.Env, input json.RawMessage) (string, *GrepResponse, error) {
	var in grepInput
	if err := json.Unmarshal(input, &in); err != nil {
		return "", nil, failf("invalid input: %v", err)
	}
	q, err := g.query(env, in)
	if err != nil {
		return "", nil, err
	}
	b, err := g.backend()
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	raw, truncated, err := b.search(ctx, q)
	if err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) && !errors.As(err, new(failure)) {
			return "", nil, failf("the search took longer than %s and was stopped; narrow it with path, glob or type", g.cfg.Timeout)
		}
		return "", nil, err
	}
	text, resp := g.present(q, in, raw, truncated)
	return text, resp, nil
}

// query validates the input and resolves defaults.
func (g *Grep) query(env *tool.Env, in grepInput) (*query, error) {
	q := &query{pattern: in.Pattern, mode: in.OutputMode, ignoreCase: in.IgnoreCase, fileType: in.Type,
		multiline: in.Multiline, maxRaw: 8 << 20}
	if q.mode == "" {
		q.mode = modeFiles
	}
	root, err := searchRoot(env, in.Path)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, failf("path %s does not exist or cannot be read: %v", root, unwrapPath(err))
	}
	q.root, q.rootIsFile = root, !info.IsDir()
	ctxLines := pick(in.Context, pick(in.C, 0))
	q.before, q.after = pick(in.Before, ctxLines), pick(in.After, ctxLines)
	q.lineNumbers = in.LineNums == nil || *in.LineNums
	q.globs = splitGlobs(in.Glob)
	if _, err := newOverrides(q.globs); err != nil {
		return nil, failf("%v", err)
	}
	if _, err := newTypeMatcher(q.fileType); err != nil {
		return nil, failf("%v", err)
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

// searchRoot resolves the path field against the working directory.
func searchRoot(env *tool.Env, p string) (string, error) {
	cwd := ""
	if env != nil {
		cwd = env.Cwd
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("no working directory: %w", err)
		}
		cwd = wd
	}
	if p == "" {
		return filepath.Clean(cwd), nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p), nil
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
		return nil, failf("invalid regular expression %q: %v", q.pattern, err)
	}
	if !q.multiline && matchesNewline(parsed) {
		return nil, failf("the pattern %q contains a line break; set multiline to true to match across lines", q.pattern)
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
		return nil, failf("invalid regular expression %q: %v", q.pattern, err)
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

func (g *Grep) backend() (backend, error) {
	switch g.cfg.Backend {
	case BackendGo:
		return goBackend{}, nil
	case BackendRipgrep:
		if p := g.ripgrep(); p != "" {
			return rgBackend{path: p}, nil
		}
		return nil, errors.New("grep: ripgrep (rg) is required by the configuration but was not found")
	}
	if p := g.ripgrep(); p != "" {
		return rgBackend{path: p}, nil
	}
	return goBackend{}, nil
}

func (g *Grep) ripgrep() string {
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
