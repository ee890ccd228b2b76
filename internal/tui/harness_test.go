package tui

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// deadline bounds every wait of a test.
const deadline = 60 * time.Second

// vterm is a terminal emulator the program draws on, safe for the test to
// read while the program writes; every write wakes the waiters.
type vterm struct {
	mu      sync.Mutex
	emu     *vt.Emulator
	changed chan struct{}
	all     bytes.Buffer // every byte the program sent
}

func newTerm(w, h int) *vterm {
	return &vterm{emu: vt.NewEmulator(w, h), changed: make(chan struct{})}
}

// Write takes the program's output as a tty would hand it to a terminal:
// with the line discipline's ONLCR, each newline arrives as CR LF.
func (t *vterm) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.all.Write(p)
	_, err := t.emu.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n")))
	close(t.changed)
	t.changed = make(chan struct{})
	return len(p), err
}

// resize changes the emulator's size, as a terminal window does.
func (t *vterm) resize(w, h int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emu.Resize(w, h)
}

// raw is everything the program sent.
func (t *vterm) raw() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.all.String()
}

// screen is the emulator's text, trailing spaces cut, and a channel that
// closes at the next write.
func (t *vterm) screen() (string, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(t.emu.String(), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n"), t.changed
}

// world is a test's project, home, fake API and the UI running on a
// terminal emulator.
type world struct {
	t      *testing.T
	dir    string
	home   string
	srv    *fakeapi.Server
	term   *vterm
	prog   *tea.Program
	model  *Model
	sess   *cohort.Session
	policy func(*fakeapi.Request) fakeapi.Reply
	done   chan error
	// cfg is the session's Config (Resume opens more like it).
	cfg cohort.Config
}

// fixedRoot makes a directory whose path has the same length in every
// run, so that the prompts — and so the fake's token counts and the costs
// on screen — are the same bytes long each time.
func fixedRoot(t *testing.T) string {
	base := t.TempDir()
	const want = 96
	pad := want - len(base) - 1
	if pad < 1 {
		t.Fatalf("temp dir %s is too long for a fixed-length root", base)
	}
	root := filepath.Join(base, strings.Repeat("r", pad))
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

type worldConfig struct {
	width, height int
	mode          string
	configure     func(*cohort.Config)
}

func newWorld(t *testing.T, wc worldConfig, policy func(*fakeapi.Request) fakeapi.Reply) *world {
	t.Helper()
	if wc.width == 0 {
		wc.width, wc.height = 100, 30
	}
	root := fixedRoot(t)
	w := &world{t: t, dir: filepath.Join(root, "project"), home: filepath.Join(root, "home"), policy: policy, done: make(chan error, 1)}
	for _, d := range []string{w.dir, w.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.srv = fakeapi.New(fakeapi.Config{Policy: policy})
	t.Cleanup(w.srv.Close)
	vars := map[string]string{"HOME": w.home, "PATH": os.Getenv("PATH")}
	prompts := NewPrompts()
	w.cfg = cohort.Config{Dir: w.dir, Home: filepath.Join(w.home, ".cohort"), Model: "sonnet", BaseURL: w.srv.URL, APIKey: "test-key",
		PermissionMode: wc.mode, PartialMessages: true, TeammateMode: "in-process", Sandbox: "off",
		CanUseTool: prompts.CanUseTool, AskUser: prompts.AskUser, ApprovePlan: prompts.ApprovePlan, Wake: prompts.Wake,
		Getenv: func(k string) string { return vars[k] },
		Environ: func() []string {
			var out []string
			for k, v := range vars {
				out = append(out, k+"="+v)
			}
			return out
		}, Stderr: logWriter{t}}
	if wc.configure != nil {
		wc.configure(&w.cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	s, err := cohort.New(ctx, w.cfg)
	if err != nil {
		t.Fatalf("cohort.New: %v", err)
	}
	w.sess = s
	w.term = newTerm(wc.width, wc.height)
	opts := Options{Session: s, Prompts: prompts, Mode: s.PermissionMode(), Model: s.Model(), Dir: w.dir,
		Sessions: func(ctx context.Context) ([]cohort.SessionSummary, error) {
			in, err := cohort.Inspect(ctx, w.cfg)
			if err != nil {
				return nil, err
			}
			return in.Sessions()
		},
		Resume: func(ctx context.Context, id string) (Session, error) {
			c := w.cfg
			c.Resume = id
			return cohort.New(ctx, c)
		}}
	w.prog, w.model = NewProgram(context.Background(), opts, nil, w.term,
		tea.WithWindowSize(wc.width, wc.height), tea.WithoutSignalHandler(), tea.WithColorProfile(colorprofile.ANSI256))
	go func() {
		_, err := w.prog.Run()
		w.done <- err
	}()
	t.Cleanup(w.quit)
	return w
}

// quit ends the program and waits for it and everything it started.
func (w *world) quit() {
	w.prog.Quit()
	select {
	case err := <-w.done:
		if err != nil {
			w.t.Errorf("program: %v", err)
		}
	case <-time.After(deadline):
		w.t.Fatal("the program did not end")
	}
	w.model.shutdown()
}

type logWriter struct{ t *testing.T }

func (l logWriter) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// key sends key presses by name: "enter", "esc", "shift+tab", "ctrl+t", or
// text typed a character at a time.
func (w *world) key(names ...string) {
	for _, n := range names {
		w.prog.Send(keyMsg(n))
	}
}

func (w *world) typeText(s string) {
	for _, r := range s {
		w.prog.Send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(name string) tea.KeyPressMsg {
	switch name {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+t":
		return tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}
	case "ctrl+o":
		return tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	case "ctrl+b":
		return tea.KeyPressMsg{Code: 'b', Mod: tea.ModCtrl}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	}
	r := []rune(name)
	return tea.KeyPressMsg{Code: r[0], Text: name}
}

// waitFor waits until the screen holds every want, and returns it.
func (w *world) waitFor(want ...string) string {
	w.t.Helper()
	timeout := time.After(deadline)
	for {
		scr, changed := w.term.screen()
		ok := true
		for _, s := range want {
			if !strings.Contains(scr, s) {
				ok = false
			}
		}
		if ok {
			return scr
		}
		select {
		case <-changed:
		case <-timeout:
			w.t.Fatalf("the screen never showed %q; it shows:\n%s", want, scr)
		}
	}
}

// waitUntil waits until cond holds of the screen.
func (w *world) waitUntil(what string, cond func(string) bool) string {
	w.t.Helper()
	timeout := time.After(deadline)
	for {
		scr, changed := w.term.screen()
		if cond(scr) {
			return scr
		}
		select {
		case <-changed:
		case <-timeout:
			w.t.Fatalf("the screen never showed %s; it shows:\n%s", what, scr)
		}
	}
}

// durations match the elapsed times on screen, which the wall clock sets.
var durations = regexp.MustCompile(` *\b(\d+h\d\dm|\d+m\d\ds|\d+s)\b`)

// agentIDs match the ids of spawned agents.
var agentIDs = regexp.MustCompile(`\ba[0-9a-f]{16}\b`)

// tempPaths match the test's temporary paths.
var tempPaths = regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/Test[^\s:…]*`)

// normalize hides what differs between runs: elapsed times (kept at their
// width, so the columns stay where they are), the temp root, session ids.
func (w *world) normalize(scr string) string {
	scr = durations.ReplaceAllStringFunc(scr, func(m string) string {
		return strings.Repeat(" ", len(m)-2) + "Ns"
	})
	scr = agentIDs.ReplaceAllString(scr, "a0000000000000000")
	return tempPaths.ReplaceAllStringFunc(scr, func(m string) string {
		if rest, ok := strings.CutPrefix(m, filepath.Dir(w.dir)); ok {
			return "ROOT" + rest
		}
		if strings.HasPrefix(w.dir, m) {
			return "ROOT/" // cut at the width
		}
		return m
	})
}

// golden compares the screen with testdata/NAME.golden (-update writes it).
func (w *world) golden(name, scr string) {
	w.t.Helper()
	got := w.normalize(scr) + "\n"
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			w.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		w.t.Errorf("frame %s differs from %s (-want +got):\n%s", name, path, diff)
	}
}

// keepColours writes the screen with its colours to testdata/NAME.ansi
// (with -update): the README's picture is made from it with freeze.
func (w *world) keepColours(name string) {
	w.t.Helper()
	if !*update {
		return
	}
	w.term.mu.Lock()
	scr := w.term.emu.Render()
	w.term.mu.Unlock()
	lines := strings.Split(scr, "\n")
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[0])) == "" {
		lines = lines[1:]
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".ansi"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// gate holds fake replies until it opens.
type gate struct {
	mu      sync.Mutex
	n       int
	reached chan struct{}
	want    int
	open    chan struct{}
}

func newGate(want int) *gate {
	return &gate{reached: make(chan struct{}), want: want, open: make(chan struct{})}
}

func (g *gate) wait(r *fakeapi.Request) bool {
	g.mu.Lock()
	g.n++
	if g.n == g.want {
		close(g.reached)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (g *gate) await(t *testing.T) {
	t.Helper()
	select {
	case <-g.reached:
	case <-time.After(deadline):
		t.Fatal("the requests never reached the gate")
	}
}

func use(name string, input any) fakeapi.Block { return fakeapi.ToolUseBlock("", name, input) }

// idRe matches the picker's session id and date.
var idRe = regexp.MustCompile(`[0-9a-f]{8}  [A-Z][a-z]{2} \d\d \d\d:\d\d`)

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// waitFile checks a file the session wrote before the screen said so.
func waitFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
