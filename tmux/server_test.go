package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"
)

// readyScript prints what the tests check, then waits to be killed.
const readyScript = `echo "FOO=$FOO"; echo "PWD=$(pwd)"; echo ready; exec sleep 30`

func TestSplitPanes(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := testCtx(t)
	const n = 4
	panes := make([]Pane, n)
	dirs := make([]string, n)
	g, gctx := errgroup.WithContext(ctx)
	for i := range n {
		dirs[i] = t.TempDir()
		g.Go(func() error {
			p, err := s.SplitPane(gctx, PaneSpec{
				Argv:   []string{"sh", "-c", readyScript},
				Env:    map[string]string{"FOO": fmt.Sprintf("value %d; $(x)", i)},
				Cwd:    dirs[i],
				Title:  fmt.Sprintf("mate-%d", i),
				Layout: Tiled,
			})
			panes[i] = p
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, p := range panes {
		screen := waitOutput(t, ctx, s, p.ID, "ready")
		for _, want := range []string{fmt.Sprintf("FOO=value %d; $(x)", i), "PWD=" + dirs[i]} {
			if !strings.Contains(screen, want) {
				t.Errorf("pane %s does not show %q:\n%s", p.ID, want, screen)
			}
		}
		if alive, err := s.Alive(ctx, p.ID); err != nil || !alive {
			t.Errorf("Alive(%s) = %v, %v; want true", p.ID, alive, err)
		}
		if pid, err := s.PanePID(ctx, p.ID); err != nil || pid != p.PID {
			t.Errorf("PanePID(%s) = %d, %v; want %d", p.ID, pid, err, p.PID)
		}
	}
	out, err := s.run(ctx, "list-panes", "-a", "-F", "#{pane_id} #{pane_title}")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range panes {
		if want := fmt.Sprintf("%s mate-%d\n", p.ID, i); !strings.Contains(out, want) {
			t.Errorf("titles: want %q in\n%s", want, out)
		}
	}

	victim := panes[0]
	if err := s.Kill(ctx, victim.ID); err != nil {
		t.Fatal(err)
	}
	if alive, err := s.Alive(ctx, victim.ID); err != nil || alive {
		t.Errorf("Alive after Kill = %v, %v; want false", alive, err)
	}
	if running(victim.PID) || len(sessionMembers(victim.PID)) > 0 {
		t.Errorf("the killed pane's process %d (or its session) still runs", victim.PID)
	}
	if _, err := s.Status(ctx, victim.ID); !errors.Is(err, ErrNoPane) {
		t.Errorf("Status after Kill: %v, want ErrNoPane", err)
	}
	if err := s.Kill(ctx, victim.ID); err != nil {
		t.Errorf("second Kill: %v", err)
	}
	if alive, err := s.Alive(ctx, panes[1].ID); err != nil || !alive {
		t.Errorf("a neighbour of the killed pane: Alive = %v, %v", alive, err)
	}
}

// TestArgvLiteral passes arguments that a shell, tmux's command parser or
// its format expansion would act on, and checks that each arrives as is.
func TestArgvLiteral(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	cwd := filepath.Join(dir, "odd #{pane_id} #(echo x) ;")
	if err := os.Mkdir(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	args := []string{
		"two words", "it's", `"double"`, "$(touch " + marker + ")", "`touch " + marker + "`",
		";", "a;", `\;`, `b\;`, "$HOME", "#{pane_id}", "#(touch " + marker + ")", "*", "~", "-t", "--", "",
		"ünïcödé",
	}
	script := `for a in "$@"; do printf '<%s>\n' "$a"; done; echo "PWD=$(pwd)"; echo done; exec sleep 30`
	p, err := s.SplitPane(ctx, PaneSpec{
		Argv:  append([]string{"sh", "-c", script, "sh"}, args...),
		Cwd:   cwd,
		Title: "#(touch " + marker + ") #{pane_id}",
	})
	if err != nil {
		t.Fatal(err)
	}
	screen := waitOutput(t, ctx, s, p.ID, "\ndone")
	var got []string
	for line := range strings.Lines(screen) {
		if strings.HasPrefix(line, "<") {
			got = append(got, strings.TrimSuffix(strings.TrimRight(line, "\n"), ">")[1:])
		}
	}
	if diff := cmp.Diff(args, got); diff != "" {
		t.Errorf("arguments (-want +got):\n%s\nscreen:\n%s", diff, screen)
	}
	if !strings.Contains(screen, "PWD="+cwd) {
		t.Errorf("the pane did not start in %q:\n%s", cwd, screen)
	}
	out, err := s.run(ctx, "display-message", "-p", "-t", p.ID, "#{pane_title}")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := firstLine(out), "#(touch "+marker+") #{pane_id}"; got != want {
		t.Errorf("title = %q, want %q", got, want)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an argument was run as a command: %s exists (%v)", marker, err)
	}
}

func TestRemainOnExit(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := testCtx(t)
	// The script waits for a line before it exits: tmux before 3.4 may
	// drop output that it has not read when the process exits.
	p, err := s.SplitPane(ctx, PaneSpec{Argv: []string{"sh", "-c", "echo last words; read x; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, ctx, s, p.ID, "last words")
	if _, err := s.run(ctx, "send-keys", "-t", p.ID, "Enter"); err != nil {
		t.Fatal(err)
	}
	var st PaneStatus
	eventually(t, ctx, "pane exits", func() (bool, error) {
		st, err = s.Status(ctx, p.ID)
		return st.Dead, err
	})
	// tmux sees the terminal close first and may reap the process only at
	// its next child event: the status can still be unknown.
	want := PaneStatus{ID: p.ID, PID: p.PID, Dead: true, ExitStatus: 3}
	if st.ExitStatus == -1 {
		want.ExitStatus = -1
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	if alive, err := s.Alive(ctx, p.ID); err != nil || alive {
		t.Errorf("Alive = %v, %v; want false", alive, err)
	}
	if screen, err := s.Capture(ctx, p.ID, 100); err != nil || !strings.Contains(screen, "last words") {
		t.Errorf("dead pane lost its output (%v):\n%s", err, screen)
	}
	if err := s.Kill(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Status(ctx, p.ID); !errors.Is(err, ErrNoPane) {
		t.Errorf("dead pane after Kill: %v, want ErrNoPane", err)
	}
}

// TestKillStubborn: a command that ignores SIGHUP and SIGTERM is still
// stopped, with everything it started.
func TestKillStubborn(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := testCtx(t)
	p, err := s.SplitPane(ctx, PaneSpec{Argv: []string{"sh", "-c",
		`trap '' HUP TERM; sh -c 'trap "" HUP TERM; while :; do sleep 1; done' & echo ready; while :; do sleep 1; done`}})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, ctx, s, p.ID, "ready")
	if n := len(sessionMembers(p.PID)); n < 2 {
		t.Fatalf("want the script and its child in session %d, found %d processes", p.PID, n)
	}
	if err := s.Kill(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if left := sessionMembers(p.PID); len(left) > 0 {
		t.Errorf("processes %v of the pane survived Kill", left)
	}
}

// TestLegacyCommands drives a modern tmux with the commands built for
// tmux 2.x: environment through env(1), remain-on-exit per window, -p.
func TestLegacyCommands(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.feat = featuresOf(Version{2, 5, "2.5"})
	ctx := testCtx(t)
	p, err := s.SplitPane(ctx, PaneSpec{Argv: []string{"sh", "-c", readyScript}, Env: map[string]string{"FOO": "old; tmux"},
		Percent: 30, Horizontal: true, Title: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if screen := waitOutput(t, ctx, s, p.ID, "ready"); !strings.Contains(screen, "FOO=old; tmux") {
		t.Errorf("environment did not arrive:\n%s", screen)
	}
	out, err := s.run(ctx, "show-window-options", "-t", p.ID, "remain-on-exit")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "on") {
		t.Errorf("remain-on-exit = %q, want on", out)
	}
}

func TestNewWindow(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := testCtx(t)
	p, err := s.NewWindow(ctx, PaneSpec{Argv: []string{"sh", "-c", readyScript}, Name: "alice", Env: map[string]string{"FOO": "w"}})
	if err != nil {
		t.Fatal(err)
	}
	if screen := waitOutput(t, ctx, s, p.ID, "ready"); !strings.Contains(screen, "FOO=w") {
		t.Errorf("environment did not arrive:\n%s", screen)
	}
	// A second window next to the first one's pane.
	q, err := s.NewWindow(ctx, PaneSpec{Argv: []string{"sh", "-c", readyScript}, Target: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.run(ctx, "list-panes", "-a", "-F", "#{pane_id} #{window_name} #{window_active}")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, p.ID+" alice 0\n") || !strings.Contains(out, q.ID+" ") {
		t.Errorf("windows:\n%s", out)
	}
	if strings.Contains(out, p.ID+" alice 1") || strings.Contains(out, q.ID+" sleep 1") {
		t.Errorf("a new window took the focus:\n%s", out)
	}
	if err := s.SelectLayout(ctx, p.ID, EvenVertical); err != nil {
		t.Error(err)
	}
	if err := s.SetTitle(ctx, q.ID, "renamed #1"); err != nil {
		t.Error(err)
	}
	out, err = s.run(ctx, "display-message", "-p", "-t", q.ID, "#{pane_title}")
	if err != nil || firstLine(out) != "renamed #1" {
		t.Errorf("title = %q, %v", out, err)
	}
}

func TestCurrentServer(t *testing.T) {
	t.Parallel()
	private := startServer(t)
	ctx := testCtx(t)
	out, err := private.run(ctx, "display-message", "-p", "-t", "=cohort:", "#{pid} #{pane_id}")
	if err != nil {
		t.Fatal(err)
	}
	pid, pane, _ := strings.Cut(firstLine(out), " ")
	env := map[string]string{"TMUX": private.Socket() + "," + pid + ",0", "TMUX_PANE": pane}
	getenv := func(k string) string { return env[k] }
	if !Inside(getenv) || Inside(func(string) string { return "" }) {
		t.Fatal("Inside does not follow $TMUX")
	}
	cur, err := Current(ctx, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Private() || cur.Socket() != private.Socket() {
		t.Errorf("Current: private %v, socket %s", cur.Private(), cur.Socket())
	}
	p, err := cur.SplitPane(ctx, PaneSpec{Argv: []string{"sh", "-c", readyScript}, Horizontal: true, Percent: 40})
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, ctx, cur, p.ID, "ready")
	active, err := cur.run(ctx, "display-message", "-p", "-t", "=cohort:", "#{pane_id}")
	if err != nil || firstLine(active) != pane {
		t.Errorf("the split took the focus: active pane %q (%v), want %s", active, err, pane)
	}
	if err := cur.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Status(ctx, p.ID); !errors.Is(err, ErrClosed) {
		t.Errorf("Status on a closed handle: %v, want ErrClosed", err)
	}
	if alive, err := private.Alive(ctx, p.ID); err != nil || !alive {
		t.Errorf("closing the handle on the user's server killed a pane: %v, %v", alive, err)
	}

	if _, err := Current(ctx, func(string) string { return "" }); !errors.Is(err, ErrNotInside) {
		t.Errorf("Current outside tmux: %v", err)
	}
	env["TMUX_PANE"] = "1; kill-server"
	if _, err := Current(ctx, getenv); err == nil {
		t.Error("Current accepted a bad $TMUX_PANE")
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := testCtx(t)
	var panes []Pane
	for _, script := range []string{readyScript, `trap '' HUP TERM; echo ready; while :; do sleep 1; done`} {
		p, err := s.SplitPane(ctx, PaneSpec{Argv: []string{"sh", "-c", script}})
		if err != nil {
			t.Fatal(err)
		}
		waitOutput(t, ctx, s, p.ID, "ready")
		panes = append(panes, p)
	}
	serverPID := s.serverPID
	if !running(serverPID) {
		t.Fatalf("server pid %d is not running", serverPID)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if running(serverPID) {
		t.Errorf("tmux server %d still runs after Close", serverPID)
	}
	for _, p := range panes {
		if left := sessionMembers(p.PID); len(left) > 0 {
			t.Errorf("pane %s: processes %v survived Close", p.ID, left)
		}
	}
	if _, err := os.Stat(s.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.SplitPane(ctx, PaneSpec{Argv: []string{"true", "x"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("SplitPane after Close: %v, want ErrClosed", err)
	}
}

func TestStartServerErrors(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := testCtx(t)
	if _, err := StartServer(ctx, ServerConfig{Socket: s.Socket()}); !errors.Is(err, ErrServerExists) {
		t.Errorf("second server on one socket: %v, want ErrServerExists", err)
	}
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 100), "tmux.sock")
	if _, err := StartServer(ctx, ServerConfig{Socket: long}); err == nil || !strings.Contains(err.Error(), "at most 107") {
		t.Errorf("long socket path: %v", err)
	}
	if _, err := StartServer(ctx, ServerConfig{Socket: filepath.Join(t.TempDir(), "s"), Session: "a:b"}); err == nil {
		t.Error("bad session name accepted")
	}
	if _, err := StartServer(ctx, ServerConfig{}); err == nil {
		t.Error("empty socket accepted")
	}
	if _, err := StartServer(ctx, ServerConfig{Socket: filepath.Join(t.TempDir(), "s"), Bin: "no-such-tmux-binary"}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("missing binary: %v, want ErrNotInstalled", err)
	}
}

// TestServerGone: once the server has gone away, panes are reported dead
// instead of failing.
func TestServerGone(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := testCtx(t)
	p, err := s.SplitPane(ctx, PaneSpec{Argv: []string{"sh", "-c", readyScript}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.run(ctx, "kill-server"); err != nil {
		t.Fatal(err)
	}
	if alive, err := s.Alive(ctx, p.ID); err != nil || alive {
		t.Errorf("Alive on a dead server = %v, %v; want false, nil", alive, err)
	}
	if err := s.Kill(ctx, p.ID); err != nil {
		t.Errorf("Kill on a dead server: %v", err)
	}
	_, err = s.Capture(ctx, p.ID, 0)
	if !errors.Is(err, ErrNoServer) {
		t.Errorf("Capture on a dead server: %v, want ErrNoServer", err)
	}
	eventually(t, ctx, "pane process ends", func() (bool, error) { return !running(p.PID), nil })
}

// TestDeadline: a tmux command that cannot finish is stopped at the
// context's deadline.
func TestDeadline(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	_, err := s.SplitPane(ctx, PaneSpec{Argv: []string{"sh", "-c", readyScript}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("SplitPane with a cancelled context: %v, want context.Canceled", err)
	}
}
