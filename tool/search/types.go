package search

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// fileTypes maps Grep's type names to file-name globs. They are ripgrep's
// definitions (14.x) for the languages agents meet most; both backends use
// this table, so a type means the same files with or without rg.
var fileTypes = map[string][]string{
	"c":          {"*.[chH]", "*.[chH].in", "*.cats"},
	"cpp":        {"*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"},
	"cs":         {"*.cs"},
	"csharp":     {"*.cs"},
	"css":        {"*.css", "*.scss"},
	"dart":       {"*.dart"},
	"docker":     {"*Dockerfile*"},
	"elixir":     {"*.eex", "*.ex", "*.exs"},
	"go":         {"*.go"},
	"haskell":    {"*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"},
	"html":       {"*.ejs", "*.htm", "*.html"},
	"java":       {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"js":         {"*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"},
	"json":       {"*.json", "composer.lock"},
	"jsonl":      {"*.jsonl"},
	"kotlin":     {"*.kt", "*.kts"},
	"lua":        {"*.lua"},
	"make":       {"*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Mm]akefile", "[Gg][Nn][Uu]makefile.am", "[Mm]akefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile.in"},
	"markdown":   {"*.markdown", "*.md", "*.mdown", "*.mkdn"},
	"md":         {"*.markdown", "*.md", "*.mdown", "*.mkdn"},
	"php":        {"*.php", "*.php3", "*.php4", "*.php5", "*.phtml"},
	"proto":      {"*.proto"},
	"protobuf":   {"*.proto"},
	"py":         {"*.py", "*.pyi"},
	"python":     {"*.py", "*.pyi"},
	"r":          {"*.R", "*.Rmd", "*.Rnw", "*.r"},
	"ruby":       {"*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"},
	"rust":       {"*.rs"},
	"scala":      {"*.sbt", "*.scala"},
	"sh":         {"*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"},
	"sql":        {"*.psql", "*.sql"},
	"svelte":     {"*.svelte"},
	"swift":      {"*.swift"},
	"tf":         {"*.tf", "*.tf.json", "*.tfvars"},
	"toml":       {"*.toml", "Cargo.lock"},
	"ts":         {"*.cts", "*.mts", "*.ts", "*.tsx"},
	"typescript": {"*.cts", "*.mts", "*.ts", "*.tsx"},
	"txt":        {"*.txt"},
	"xml":        {"*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"},
	"yaml":       {"*.yaml", "*.yml"},
	"zig":        {"*.zig"},
}

// typeNames lists the known types for error messages.
func typeNames() string { return strings.Join(slices.Sorted(maps.Keys(fileTypes)), ", ") }

// typeMatcher matches file names against one type's globs.
type typeMatcher struct{ res []*regexp.Regexp }

func newTypeMatcher(name string) (*typeMatcher, error) {
	if name == "" {
		return nil, nil
	}
	globs, ok := fileTypes[name]
	if !ok {
		return nil, fmt.Errorf("unknown file type %q; known types: %s (or use glob, e.g. \"*.ext\")", name, typeNames())
	}
	m := &typeMatcher{}
	for _, g := range globs {
		src, err := globRegexp(g)
		if err != nil {
			return nil, err
		}
		m.res = append(m.res, regexp.MustCompile(src))
	}
	return m, nil
}

// match reports whether the base name of p has the type.
func (m *typeMatcher) match(p string) bool {
	base := path.Base(p)
	for _, re := range m.res {
		if re.MatchString(base) {
			return true
		}
	}
	return false
}
