//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cohort-dev/cohort/internal/proc"
)

// homeProtected are directories in the user's home whose files configure
// programs that run with the user's rights later (keys, shells, git,
// desktop autostart): no hook is granted a file there.
var homeProtected = []string{".ssh", ".gnupg", ".config", ".local", ".aws", ".kube", ".docker"}

// Grant checks that path, a file a confined hook's command names as
// where it writes, may be granted to that hook, and returns the regular
// file it resolves to. A file that does not exist is created empty (mode
// 0600) when its directory exists; no directory is ever made. Refused:
// a path the writing policy of cwd protects (read-only binds, the
// directories above them, hidden and secret paths, hook scripts'
// directories), anything in a git dir, the user's settings directories
// but for plain files at their top that are no settings or memory file,
// dot files at the top of the home and the tool configuration folders
// there (homeProtected), a path through a link below the home, the temp
// dir or Cohort's home (the model could have made it, and chosen where the
// file lands), and whatever is not a regular file once resolved. That
// last refusal is made twice, by an lstat walk (linkCheck) and by the
// kernel (the literal path opened with no link followed below those
// anchors, and the file it opens compared with the one granted), so a
// mistake in either is not a grant (TestGrantHoldsWithTheLinkCheckWrong).
// A path the writing profile lets the hook write already is "" with no
// error: nothing to grant.
func (s *Sandbox) Grant(cwd, path string) (string, error) { return s.grant(cwd, path, true) }

// Grantable says why Grant would refuse path (nil if it would not),
// without making a missing file: the start-up notices ask it for every
// hook, including hooks that never run.
func (s *Sandbox) Grantable(cwd, path string) error {
	_, err := s.grant(cwd, path, false)
	return err
}

func (s *Sandbox) grant(cwd, path string, create bool) (string, error) {
	if s.cfg.Unconfined {
		return path, nil
	}
	if !filepath.IsAbs(path) {
		return "", errors.New("not an absolute path")
	}
	path = filepath.Clean(path)
	if err := s.protects(cwd, path); err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", errors.New("its directory does not exist")
	}
	// In a folder the hook may write anyway (the project, the worktree,
	// the temp dir): no grant, and nothing made. Making the file there
	// would change what the hook sees (a hook that appends only to a log
	// that exists would start to write).
	if pol := s.policyFor(cwd, Writing); slices.ContainsFunc(pol.Writable, func(w string) bool {
		return within(dir, w) || within(dir, mustReal(w))
	}) {
		return "", nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", errors.New("its directory is not a directory")
	}
	// Where the file lands is the user's literal path, never a link's:
	// links at or above the home, the temp dir and Cohort's home are the
	// system's; one below them may be the model's, which would choose
	// what the grant opens (a log's folder linked to .git/hooks or to
	// Cohort's home).
	if err := linkCheck(s, path); err != nil {
		return "", err
	}
	if err := s.protects(cwd, filepath.Join(dir, filepath.Base(path))); err != nil {
		return "", err
	}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		if !create {
			return path, nil
		}
		// The hook appends to it: make it now, empty, with no link
		// followed on the way (the folder was checked by name above and
		// could be swapped for a link since), so that a rule can name it.
		// The folder is opened by its literal name, the kernel following
		// no link below the system's anchors: this holds even if the
		// check above is wrong.
		dfd, err := s.openLiteral(filepath.Dir(path), unix.O_DIRECTORY)
		if err != nil {
			return "", fmt.Errorf("it could not be created: its folder %s changed or goes through a link: %v", filepath.Dir(path), err)
		}
		fd, err := unix.Openat(dfd, filepath.Base(path), unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		unix.Close(dfd)
		if err != nil {
			return "", fmt.Errorf("it could not be created: %v", err)
		}
		unix.Close(fd)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if real != path {
		if err := s.protects(cwd, real); err != nil {
			return "", fmt.Errorf("it is a link to %s: %w", real, err)
		}
	}
	var want unix.Stat_t
	if err := unix.Lstat(real, &want); err != nil || want.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", errors.New("it is not a regular file")
	}
	// The second layer under linkCheck: the file the literal path names,
	// resolved by the kernel with no link followed below the anchors, must
	// be the file granted. A link the lstat walk missed fails the open;
	// one that points elsewhere fails the comparison.
	fd, err := s.openLiteral(path, 0)
	if err != nil {
		return "", fmt.Errorf("it goes through a link: a hook is granted only a file named by its real path (%v)", err)
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unix.Close(fd)
	if err != nil || want.Dev != st.Dev || want.Ino != st.Ino {
		return "", errors.New("it goes through a link: a hook is granted only a file named by its real path")
	}
	return real, nil
}

// linkCheck is the first refusal of a path through a model's link; a
// variable so that a test can make it wrong and show the kernel's
// resolution (openLiteral) still holds.
var linkCheck = (*Sandbox).noLinks

// anchors are the folders at or above which a link is the system's: the
// home, the temp dir and Cohort's home.
func (s *Sandbox) anchors() []string {
	var out []string
	for _, a := range []string{s.home(), os.TempDir(), s.cfg.CohortHome} {
		if a != "" {
			out = append(out, filepath.Clean(a))
		}
	}
	return out
}

// openLiteral opens path (O_PATH, plus flags) as the kernel resolves it:
// links are followed only in the part of the path that is an ancestor of
// an anchor (a /home or /tmp that is a link), and none below it
// (RESOLVE_NO_SYMLINKS), so a model's link anywhere below fails the open.
func (s *Sandbox) openLiteral(path string, flags int) (int, error) {
	base := "/"
	for _, a := range s.anchors() {
		c := commonDir(path, a)
		if len(c) > len(base) {
			base = c
		}
	}
	bfd, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(bfd)
	rel, err := filepath.Rel(base, path)
	if err != nil {
		return -1, err
	}
	return unix.Openat2(bfd, rel, &unix.OpenHow{Flags: uint64(unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC | flags), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH})
}

// commonDir is the longest folder that holds both a and b.
func commonDir(a, b string) string {
	c := filepath.Clean(a)
	for !within(filepath.Clean(b), c) {
		c = filepath.Dir(c)
	}
	return c
}

// noLinks refuses a path that goes through a symbolic link other than the
// system's: links that are, or lead to, the home, the temp dir or Cohort's
// home (a /home that is a link, macOS's /tmp).
func (s *Sandbox) noLinks(path string) error {
	anchors := s.anchors()
	for p := path; p != filepath.Dir(p); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if !slices.ContainsFunc(anchors, func(a string) bool { return within(a, p) }) {
			return fmt.Errorf("it goes through the link %s: a hook is granted only a file named by its real path", p)
		}
	}
	return nil
}

// protects says why path is a place no hook is granted; nil when it is
// not one.
func (s *Sandbox) protects(cwd, path string) error {
	p := s.policyFor(cwd, Writing)
	if s.cfg.DenyReadIn != nil {
		p.Hidden = append(p.Hidden, s.cfg.DenyReadIn(cwd)...)
	}
	in := func(list []string) bool {
		return slices.ContainsFunc(list, func(d string) bool {
			r, err := filepath.EvalSymlinks(d)
			return within(path, d) || err == nil && within(path, r)
		})
	}
	switch {
	case in(p.ReadOnly) || in(p.SelfBound):
		return errors.New("the sandbox keeps it read-only (settings, git dirs, hook scripts)")
	case in(p.Hidden) || in(p.Secrets):
		return errors.New("the sandbox hides it")
	case slices.Contains(strings.Split(path, string(filepath.Separator)), ".git"):
		return errors.New("it is in a git dir")
	}
	for _, sc := range s.cfg.Protected {
		if in([]string{filepath.Dir(sc)}) {
			return errors.New("it is beside a hook script")
		}
	}
	home := s.cfg.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	var settings []string
	if home != "" {
		if filepath.Dir(path) == home && strings.HasPrefix(filepath.Base(path), ".") {
			return errors.New("dot files at the top of the home configure shells and tools")
		}
		for _, d := range homeProtected {
			if in([]string{filepath.Join(home, d)}) {
				return fmt.Errorf("~/%s configures programs that run with your rights", d)
			}
		}
		for _, d := range settingsDirs {
			settings = append(settings, filepath.Join(home, d))
		}
	}
	if s.cfg.CohortHome != "" {
		settings = append(settings, s.cfg.CohortHome)
	}
	for _, w := range p.Writable {
		for _, d := range settingsDirs {
			settings = append(settings, filepath.Join(w, d))
		}
	}
	for _, d := range settings {
		if !in([]string{d}) {
			continue
		}
		name := filepath.Base(path)
		if filepath.Dir(path) != d && filepath.Dir(path) != mustReal(d) {
			return errors.New("it is in a folder of a settings directory (agents, commands, skills, hooks)")
		}
		if ext := filepath.Ext(name); ext == ".json" || ext == ".md" || strings.HasPrefix(name, "settings") || strings.HasPrefix(name, ".") {
			return errors.New("it is a settings, memory or credentials file")
		}
	}
	return nil
}

func mustReal(d string) string {
	if r, err := filepath.EvalSymlinks(d); err == nil {
		return r
	}
	return d
}

// LauncherGranting is Launcher for the writing profile with the given
// files writable too (Grant): a hook and the output files its command
// names. A file Grant refuses is left out.
func (s *Sandbox) LauncherGranting(ctx context.Context, cwd string, files []string) (proc.Launcher, error) {
	var ok []string
	for _, f := range files {
		if r, err := s.Grant(cwd, f); err == nil && r != "" {
			addOnce(&ok, r)
		}
	}
	if len(ok) == 0 || s.cfg.Unconfined {
		return s.Launcher(ctx, cwd, Writing)
	}
	slices.Sort(ok)
	return s.Launcher(ctx, cwd+"\x00"+strings.Join(ok, "\x00"), granting)
}

// grantedKey splits a granting profile's "directory" into the agent's
// working directory and the files granted.
func grantedKey(key string) (cwd string, files []string) {
	parts := strings.Split(key, "\x00")
	return parts[0], parts[1:]
}

// addFiles grants each of p.WritableFiles write and truncate, on the
// file itself: opened with no link followed at the last step, it must be
// a regular file, or it is left out (it changed since Cohort checked it).
func addFiles(rs int, p *Policy, handled uint64) {
	for _, f := range p.WritableFiles {
		// f is a resolved path (Grant): a link anywhere on it now is a
		// swap made since the check, and the file is left out.
		fd, err := unix.Openat2(unix.AT_FDCWD, f, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			_ = llAddPathRule(rs, (llWriteFile|llTruncate)&handled, fd)
		}
		unix.Close(fd)
	}
}

// home is the user's home: Config.Home, else the process's.
func (s *Sandbox) home() string {
	if s.cfg.Home != "" {
		return s.cfg.Home
	}
	home, _ := os.UserHomeDir()
	return home
}
