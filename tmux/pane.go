package tmux

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/lazyre"
)

// Layout is one of tmux's preset pane arrangements.
type Layout string

// The preset layouts (tmux(1), WINDOWS AND PANES).
const (
	EvenHorizontal Layout = "even-horizontal"
	EvenVertical   Layout = "even-vertical"
	MainHorizontal Layout = "main-horizontal"
	MainVertical   Layout = "main-vertical"
	Tiled          Layout = "tiled"
)

func (l Layout) check() error {
	switch l {
	case EvenHorizontal, EvenVertical, MainHorizontal, MainVertical, Tiled:
		return nil
	}
	return fmt.Errorf("tmux layout %q: use even-horizontal, even-vertical, main-horizontal, main-vertical or tiled", clip.String(string(l), 40))
}

// PaneSpec describes the command a new pane runs and where it goes.
type PaneSpec struct {
	// Argv is the command, run directly (never through a shell), so no
	// element is interpreted: spaces, quotes, $(…), ';' and '#' arrive
	// literally. Required.
	Argv []string
	// Env is set in the command's environment on top of the server's.
	Env map[string]string
	// Cwd is the working directory, an existing absolute directory; empty
	// means tmux's default (the target pane's directory).
	Cwd string
	// Target is the pane (%N) to split, or next to whose window NewWindow
	// adds one; empty means the Server's default (the pane we run in, or
	// the private session).
	Target string
	// Title is set as the pane's title (select-pane -T, tmux 2.6+). The
	// program may change it with terminal escape sequences.
	Title string
	// Horizontal puts the new pane beside the target instead of below it.
	Horizontal bool
	// Percent is the new pane's share of the target's space, 1-99; zero
	// splits in half. SplitPane only.
	Percent int
	// Layout, if set, rearranges the window's panes after the split.
	Layout Layout
	// Name is the new window's name (NewWindow only): 1-64 letters,
	// digits, '_', '-', '.' or '@'.
	Name string
}

// Pane is a pane we created.
type Pane struct {
	ID  string // tmux pane id, "%12": stable for the pane's lifetime
	PID int    // the command's process id (a session leader)
}

// placeholder holds a new pane open until its options are set; respawn-pane
// then replaces it with the real command. Two arguments, so tmux executes
// it directly.
var placeholder = []string{"sleep", "2147483647"}

// SplitPane splits the target pane and runs spec.Argv in the new pane. The
// new pane does not take the focus. It keeps its last output after the
// command exits (remain-on-exit), so Capture can show why a teammate died;
// Kill removes it.
func (s *Server) SplitPane(ctx context.Context, spec PaneSpec) (Pane, error) {
	if err := s.checkSpec(spec); err != nil {
		return Pane{}, err
	}
	if spec.Percent < 0 || spec.Percent > 99 {
		return Pane{}, fmt.Errorf("tmux split: percent %d is not between 1 and 99 (0 splits in half)", spec.Percent)
	}
	args := []string{"split-window", "-d", "-P", "-F", "#{pane_id}"}
	target := cmp.Or(spec.Target, s.defaultTarget)
	if target != "" {
		args = append(args, "-t", target)
	}
	if spec.Horizontal {
		args = append(args, "-h")
	} else {
		args = append(args, "-v")
	}
	if spec.Percent > 0 {
		if s.feat.sizePercent {
			args = append(args, "-l", strconv.Itoa(spec.Percent)+"%")
		} else {
			args = append(args, "-p", strconv.Itoa(spec.Percent))
		}
	}
	if spec.Cwd != "" {
		args = append(args, "-c", escapeFormat(spec.Cwd))
	}
	args = append(args, "--")
	args = append(args, placeholder...)
	if spec.Layout != "" {
		// Rebalance at once, in the same command queue, so that panes
		// split concurrently do not shrink the target below tmux's minimum.
		args = append(args, sep, "select-layout")
		if target != "" {
			args = append(args, "-t", target)
		}
		args = append(args, string(spec.Layout))
	}
	out, err := s.run(ctx, args...)
	if err != nil {
		return Pane{}, fmt.Errorf("split tmux pane: %w", err)
	}
	return s.start(ctx, firstLine(out), spec)
}

// NewWindow adds a window after the target's and runs spec.Argv in it,
// like SplitPane; the window is not selected.
func (s *Server) NewWindow(ctx context.Context, spec PaneSpec) (Pane, error) {
	if err := s.checkSpec(spec); err != nil {
		return Pane{}, err
	}
	if spec.Name != "" && !windowNamePattern.MatchString(spec.Name) {
		return Pane{}, fmt.Errorf("tmux window name %q: use 1-64 letters, digits, '_', '-', '.' or '@'", clip.String(spec.Name, 70))
	}
	target := cmp.Or(spec.Target, s.defaultTarget)
	if strings.HasPrefix(target, "%") {
		// new-window takes a window, not a pane: find the pane's window.
		out, err := s.run(ctx, "display-message", "-p", "-t", target, "#{window_id}")
		if err != nil {
			return Pane{}, fmt.Errorf("new tmux window next to pane %s: %w", target, err)
		}
		target = firstLine(out)
	}
	args := []string{"new-window", "-d", "-a", "-P", "-F", "#{pane_id}"}
	if target != "" {
		args = append(args, "-t", target)
	}
	if spec.Name != "" {
		args = append(args, "-n", spec.Name)
	}
	if spec.Cwd != "" {
		args = append(args, "-c", escapeFormat(spec.Cwd))
	}
	args = append(args, "--")
	args = append(args, placeholder...)
	out, err := s.run(ctx, args...)
	if err != nil {
		return Pane{}, fmt.Errorf("new tmux window: %w", err)
	}
	return s.start(ctx, firstLine(out), spec)
}

var windowNamePattern = lazyre.New(`^[A-Za-z0-9@._-]{1,64}$`)

// start turns the placeholder pane id into the real pane: remain-on-exit,
// title, the command, layout, all in one command queue so that nothing can
// happen to the pane in between. If that fails the pane is killed.
func (s *Server) start(ctx context.Context, id string, spec PaneSpec) (Pane, error) {
	if err := checkPaneID(id); err != nil {
		return Pane{}, fmt.Errorf("tmux printed %q for the new pane: %w", clip.String(id, 40), err)
	}
	args := s.startArgs(id, spec)
	out, err := s.run(ctx, args...)
	if errors.Is(err, ErrNoPane) {
		err = fmt.Errorf("%w (the placeholder %q ended early: is it on the tmux server's PATH?)", err, strings.Join(placeholder, " "))
	}
	if err == nil {
		pid, perr := strconv.Atoi(firstLine(out))
		if perr == nil && pid > 0 {
			return Pane{ID: id, PID: pid}, nil
		}
		err = fmt.Errorf("tmux printed %q as the pane's pid", clip.String(out, 40))
	}
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if kerr := s.Kill(kctx, id); kerr != nil {
		err = errors.Join(err, fmt.Errorf("removing the half-made pane: %w", kerr))
	}
	return Pane{}, fmt.Errorf("start command in tmux pane %s: %w", id, err)
}

// startArgs builds the command chain of start.
func (s *Server) startArgs(id string, spec PaneSpec) []string {
	var args []string
	if s.feat.paneOptions {
		args = append(args, "set-option", "-p", "-t", id, "remain-on-exit", "on", sep)
	} else {
		// Before 3.0 remain-on-exit is a window option: the pane's window
		// keeps all its dead panes.
		args = append(args, "set-window-option", "-t", id, "remain-on-exit", "on", sep)
	}
	if spec.Title != "" && s.feat.paneTitle {
		args = append(args, "select-pane", "-t", id, "-T", escapeFormat(spec.Title), sep)
	}
	args = append(args, "respawn-pane", "-k", "-t", id)
	argv := spec.Argv
	keys := slices.Sorted(maps.Keys(spec.Env))
	if s.feat.envFlag {
		for _, k := range keys {
			args = append(args, "-e", k+"="+spec.Env[k])
		}
	} else if len(keys) > 0 {
		prefix := []string{"env"}
		for _, k := range keys {
			prefix = append(prefix, k+"="+spec.Env[k])
		}
		argv = append(prefix, argv...)
	}
	if len(argv) == 1 {
		// tmux runs a lone argument through the shell: hand it to env(1)
		// instead, which executes it directly.
		argv = []string{"env", argv[0]}
	}
	args = append(args, "--")
	args = append(args, argv...)
	if spec.Layout != "" {
		args = append(args, sep, "select-layout", "-t", id, string(spec.Layout))
	}
	args = append(args, sep, "display-message", "-p", "-t", id, "#{pane_pid}")
	return args
}

var envKeyPattern = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkSpec validates what SplitPane and NewWindow share.
func (s *Server) checkSpec(spec PaneSpec) error {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return errors.New("tmux pane: empty command (PaneSpec.Argv)")
	}
	for i, a := range spec.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("tmux pane: argument %d contains a NUL byte", i)
		}
	}
	if envPrefixed := !s.feat.envFlag && len(spec.Env) > 0; envPrefixed || len(spec.Argv) == 1 {
		// The program is then run by env(1), which would take these for
		// an option or an assignment.
		if a := spec.Argv[0]; strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
			return fmt.Errorf("tmux pane: program %q cannot be started through env(1); name it by a path such as ./%s", clip.String(a, 60), clip.String(a, 60))
		}
	}
	for k, v := range spec.Env {
		if !envKeyPattern.MatchString(k) {
			return fmt.Errorf("tmux pane: environment variable name %q: use letters, digits and '_', not starting with a digit", clip.String(k, 60))
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("tmux pane: environment variable %s contains a NUL byte", k)
		}
	}
	if spec.Target != "" {
		if err := checkPaneID(spec.Target); err != nil {
			return fmt.Errorf("tmux pane target: %w", err)
		}
	}
	if spec.Layout != "" {
		if err := spec.Layout.check(); err != nil {
			return err
		}
	}
	if strings.ContainsFunc(spec.Title, isControl) {
		return fmt.Errorf("tmux pane title %q contains a control character", clip.String(spec.Title, 60))
	}
	if spec.Cwd != "" {
		// tmux silently falls back to another directory when this one is
		// missing; a teammate must never start somewhere unexpected.
		if !filepath.IsAbs(spec.Cwd) {
			return fmt.Errorf("tmux pane directory %q is not absolute", spec.Cwd)
		}
		fi, err := os.Stat(spec.Cwd)
		if err != nil {
			return fmt.Errorf("tmux pane directory: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("tmux pane directory %s is not a directory", spec.Cwd)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

var paneIDPattern = lazyre.New(`^%[0-9]{1,9}$`)

func checkPaneID(id string) error {
	if !paneIDPattern.MatchString(id) {
		return fmt.Errorf("%q is not a tmux pane id like %%12", clip.String(id, 40))
	}
	return nil
}

// escapeFormat protects a value that tmux expands as a format (-c, -T):
// "#{…}" and "#(…)" would otherwise be replaced or even run as a shell
// command. "##" is tmux's escape for a literal '#'.
func escapeFormat(s string) string { return strings.ReplaceAll(s, "#", "##") }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// pollEvery is how often waits for processes look again.
const pollEvery = 20 * time.Millisecond
