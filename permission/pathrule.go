package permission

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// anchor is what a path pattern is relative to.
type anchor int

const (
	anchorCwd  anchor = iota // "src/**", "./src/**", "*.env"
	anchorRoot               // "/src/**": the settings file's project directory
	anchorHome               // "~/x"
	anchorAbs                // "//etc/**": the filesystem root
)

// pathPattern is a gitignore-style pattern from a Read/Edit rule.
type pathPattern struct {
	anchor anchor
	// pattern is slash-separated and relative to the anchor; "" means the
	// anchor directory itself (and so everything below it).
	pattern string
	// floating patterns have no slash and match at any depth, as in
	// .gitignore ("*.env" matches every .env file below the anchor).
	floating bool
	// dirOnly patterns ended with "/" and match directories only.
	dirOnly bool
}

func compilePath(spec string) (*pathPattern, error) {
	s := strings.TrimSpace(spec)
	if strings.HasPrefix(s, "!") {
		return nil, errors.New("negated patterns (!) are not supported; write a deny rule instead")
	}
	p := &pathPattern{}
	switch {
	case strings.HasPrefix(s, "//"):
		p.anchor, s = anchorAbs, strings.TrimLeft(s, "/")
	case s == "~" || strings.HasPrefix(s, "~/"):
		p.anchor, s = anchorHome, strings.TrimPrefix(strings.TrimPrefix(s, "~"), "/")
	case strings.HasPrefix(s, "~"):
		return nil, errors.New("~user paths are not supported; write ~/path or //absolute/path")
	case strings.HasPrefix(s, "/"):
		p.anchor, s = anchorRoot, strings.TrimLeft(s, "/")
	default:
		p.anchor = anchorCwd
		if rest, ok := strings.CutPrefix(s, "./"); ok {
			s = rest
		} else if s == "." {
			s = ""
		} else if !strings.Contains(strings.TrimSuffix(s, "/"), "/") {
			p.floating = true
		}
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = strings.TrimRight(s, "/")
	}
	p.pattern = s
	if s != "" && !doublestar.ValidatePattern(s) {
		return nil, fmt.Errorf("invalid glob pattern %q", spec)
	}
	return p, nil
}

// absPattern returns the pattern as an absolute glob below base.
func (p *pathPattern) absPattern(base string) string {
	base = filepath.Clean(base)
	if p.pattern == "" {
		return base
	}
	base = strings.TrimSuffix(escapeGlob(base), "/")
	if p.floating {
		return base + "/**/" + p.pattern
	}
	return filepath.Clean(base + "/" + p.pattern)
}

// escapeGlob quotes the glob characters of a literal directory name.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// matchUnder reports whether the absolute, clean path matches the pattern
// anchored at base: the path itself or any directory above it, as a
// .gitignore entry for a directory covers everything inside.
func (p *pathPattern) matchUnder(base, path string) bool {
	pat := p.absPattern(base)
	if p.pattern == "" {
		return within(path, pat)
	}
	for cur, first := path, true; ; first = false {
		if !(first && p.dirOnly && !isDir(cur)) {
			if ok, _ := doublestar.Match(pat, cur); ok {
				return true
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return false
		}
		cur = parent
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// within reports whether path is dir or inside it (both absolute, clean).
func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// maxLinks bounds symlink resolution, as the kernel does.
const maxLinks = 255

var errTooManyLinks = errors.New("too many levels of symbolic links")

// resolvePath resolves symbolic links in an absolute path the way the
// kernel would open it: components left to right, ".." applied to the
// resolved prefix (so "link/../x" goes where the link points). The part of
// the path that does not exist yet is appended lexically.
func resolvePath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	dest := "/"
	comps := strings.Split(p, "/")
	links := 0
	for i := 0; i < len(comps); i++ {
		c := comps[i]
		switch c {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, c)
		if ProcessPath(next) {
			return "", errProcessPath
		}
		fi, err := os.Lstat(next)
		if err != nil {
			rest := filepath.Clean(next + "/" + strings.Join(comps[i+1:], "/"))
			if ProcessPath(rest) {
				return "", errProcessPath
			}
			return rest, nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			dest = next
			continue
		}
		if links++; links > maxLinks {
			return "", errTooManyLinks
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			dest = "/"
		}
		comps = append(strings.Split(target, "/"), comps[i+1:]...)
		i = -1
	}
	return dest, nil
}

// errProcessPath is why a path through a process's /proc entry is not
// resolved.
var errProcessPath = errors.New("it goes through a process's /proc entry (/proc/self, /proc/PID, or /dev/fd, /dev/stdin and the like, which lead there), which names what the process opening it sees, not what the permission check sees")

// ProcessPath reports whether a clean absolute path is /proc/PID,
// /proc/self or /proc/thread-self, or below one: their cwd, root, fd/N,
// environ and the rest mean what the process that opens them sees.
// Resolving them in a checker would judge Cohort's working directory,
// descriptors and environment instead of the command's, and a Read deny
// rule could be stepped around through /proc/self/cwd; path checks treat
// them as unknown. Resolution must apply it to every prefix it reaches,
// since /dev/fd and /dev/stdin lead there through links.
func ProcessPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	return first == "self" || first == "thread-self" || (first != "" && strings.Trim(first, "0123456789") == "")
}

// pathForms is a path as the agent wrote it (made absolute and cleaned) and
// as the kernel would resolve it.
type pathForms struct {
	literal, resolved string
}

// absolute makes p absolute against cwd without cleaning, so that ".."
// after a symbolic link is resolved like the kernel does.
func absolute(cwd, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return cwd + "/" + p
}

func formsOf(cwd, p string) (pathForms, error) {
	raw := absolute(cwd, p)
	res, err := resolvePath(raw)
	if err != nil {
		return pathForms{}, fmt.Errorf("%s: %w", p, err)
	}
	return pathForms{literal: filepath.Clean(raw), resolved: res}, nil
}
