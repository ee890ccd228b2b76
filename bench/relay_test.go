package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/cli"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/llm/fakeapi/relay"
)

// TestRelayPlaysAFanOut runs the CLI in print mode against the relay with a
// goroutine as the player: a lead that starts two subagents at once, each
// running one Bash command. The player reads only the view files and writes
// answers, as a person would, and the views show each new agent's system
// prompt and tools once, then only what is new; a malformed answer is
// reported and fixed in place.
func TestRelayPlaysAFanOut(t *testing.T) {
	root := t.TempDir()
	dir, home, project := filepath.Join(root, "relay"), filepath.Join(root, "home"), filepath.Join(root, "project")
	for _, d := range []string{home, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rl, err := relay.New(relay.Config{Dir: dir, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeapi.New(fakeapi.Config{Policy: rl.Policy})
	defer rl.Close()
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	p := &player{t: t, dir: dir, cancel: cancel, views: map[string][]string{}, seen: map[string]bool{}}
	var wg sync.WaitGroup
	wg.Go(func() { p.play(ctx) })

	vars := map[string]string{"HOME": home, "COHORT_HOME": filepath.Join(home, ".cohort"), "PATH": os.Getenv("PATH"),
		"ANTHROPIC_API_KEY": "anything", "ANTHROPIC_BASE_URL": srv.URL, "TMPDIR": root}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, cli.Invocation{
		Args:  []string{"-p", "Check both halves of the project at once.", "--output-format", "json", "--allowedTools", "Bash", "--cwd", project},
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return vars[k] }, Environ: func() []string { return env },
		Getwd: func() (string, error) { return project, nil },
	})
	cancel()
	wg.Wait()
	if code != 0 || !strings.Contains(stdout.String(), `"result":"Both halves print their markers."`) {
		t.Fatalf("cohort exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	p.check()
}

// player answers the relay's requests from their views.
type player struct {
	t      *testing.T
	dir    string
	cancel context.CancelFunc

	mu         sync.Mutex
	views      map[string][]string // by agent label, in turn order
	started    int                 // subagents whose first request arrived
	seen       map[string]bool     // their requests
	firstSub   time.Time
	maxPending int
	rejected   string // the verdict on the malformed answer
	failure    string
}

var viewHead = regexp.MustCompile(`^# Request (\d+): (\S+), turn (\d+)`)

func (p *player) play(ctx context.Context) {
	done := map[string]bool{}
	for ctx.Err() == nil {
		data, _ := os.ReadFile(filepath.Join(p.dir, "pending"))
		pending := strings.Fields(string(data))
		p.mu.Lock()
		p.maxPending = max(p.maxPending, len(pending))
		p.mu.Unlock()
		for _, n := range pending {
			if done[n] {
				continue
			}
			answered, err := p.answer(ctx, n)
			if err != nil && ctx.Err() != nil {
				// The run ended (cohort exited with its answer) while this
				// Submit waited for the relay's receipt: not the player's
				// failure; check judges what the run showed.
				return
			}
			if err != nil {
				p.fail(err.Error())
				return
			}
			done[n] = answered
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (p *player) fail(msg string) {
	p.mu.Lock()
	p.failure = msg
	p.mu.Unlock()
	p.cancel()
}

// answer reads request n's view and answers it as the scenario's model,
// and reports whether it did. It holds the subagents' requests until both
// subagents have sent their first (cohort starts the second once the
// first's response has begun), so they wait together as a fan-out's do,
// or until 20 s have passed, when check reports that they did not.
func (p *player) answer(ctx context.Context, n string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(p.dir, n+".request.md"))
	if err != nil {
		return false, err
	}
	view := string(data)
	m := viewHead.FindStringSubmatch(view)
	if m == nil {
		return false, fmt.Errorf("view %s has no header:\n%s", n, view)
	}
	label, turn := m[2], m[3]
	p.mu.Lock()
	if label != "lead" {
		if turn == "0" && !p.seen[n] {
			p.seen[n] = true
			if p.started++; p.started == 1 {
				p.firstSub = time.Now()
			}
		}
		if p.started < 2 && time.Since(p.firstSub) < 20*time.Second {
			p.mu.Unlock()
			return false, nil
		}
	}
	p.views[label] = append(p.views[label], view)
	p.mu.Unlock()
	var num int
	fmt.Sscan(m[1], &num)
	marker := "relay-one"
	if strings.Contains(view, "relay-two") {
		marker = "relay-two"
	}
	var answer string
	switch {
	case label == "lead" && turn == "0":
		answer = "I'll check both halves at once.\n\n" + agentCall("one") + agentCall("two")
	case label == "lead":
		answer = "Both halves print their markers."
	case turn == "0":
		if marker == "relay-one" { // first a malformed call: its command is missing
			st, err := relay.Submit(ctx, p.dir, num, []byte("Running it.\n\n```tool Bash\ndescription: Print the marker\n```\n"))
			if err != nil {
				return false, err
			}
			p.mu.Lock()
			p.rejected = string(st.State) + ": " + st.Detail
			p.mu.Unlock()
		}
		answer = fmt.Sprintf("```tool Bash\ncommand: echo %s\ndescription: Print the marker\n```\n", marker)
	default:
		answer = fmt.Sprintf("The command printed %s.", marker)
	}
	st, err := relay.Submit(ctx, p.dir, num, []byte(answer))
	if err != nil {
		return false, err
	}
	if st.State != relay.Answered {
		return false, fmt.Errorf("request %d not answered: %+v", num, st)
	}
	return true, nil
}

func agentCall(half string) string {
	in, _ := json.Marshal(map[string]any{"description": "check half " + half, "subagent_type": "general-purpose",
		"prompt": "Run `echo relay-" + half + "` with Bash and report what it printed."})
	return "```tool Agent\n" + string(in) + "\n```\n"
}

// check asserts what the views showed.
func (p *player) check() {
	t := p.t
	if p.failure != "" {
		t.Fatalf("the player failed: %s", p.failure)
	}
	lead, one, two := p.views["lead"], p.agentViews("relay-one"), p.agentViews("relay-two")
	if len(lead) != 2 || len(one) != 2 || len(two) != 2 {
		t.Fatalf("views: lead %d, agent with relay-one %d, with relay-two %d; want 2 each (labels %v)", len(lead), len(one), len(two), p.labels())
	}
	if p.maxPending < 2 {
		t.Errorf("at most %d request waited at once; the two subagents' first requests should wait together", p.maxPending)
	}
	if !strings.HasPrefix(p.rejected, "invalid: ") || !regexp.MustCompile(`\.answer\.md:3: tool Bash: missing required field command`).MatchString(p.rejected) {
		t.Errorf("the malformed answer's verdict: %q", p.rejected)
	}
	has := func(what, view string, wants ...string) {
		for _, w := range wants {
			if !strings.Contains(view, w) {
				t.Errorf("%s lacks %q:\n%s", what, w, view)
			}
		}
	}
	lacks := func(what, view string, unwanted ...string) {
		for _, w := range unwanted {
			if strings.Contains(view, w) {
				t.Errorf("%s holds %q:\n%s", what, w, view)
			}
		}
	}
	has("the lead's first view", lead[0], "A new agent: lead.", "## System prompt", "## Tools", "### Agent", "### Bash",
		"**prompt**", "Check both halves of the project at once.")
	// Whichever subagent came first gets its system prompt and the tools
	// the lead's array did not hold; the other is told it has the same.
	first, second := one[0], two[0]
	if requestNumber(first) > requestNumber(second) {
		first, second = second, first
	}
	has("the first subagent's first view", first, "A new agent: agent-", "## System prompt", "## Tools",
		"Started by lead's tool call in request 1: description \"check half")
	lacks("the first subagent's first view", first, "### Bash") // defined in the lead's view already
	has("the second subagent's first view", second, "The same as agent-", "The same ", " tools as agent-")
	lacks("the second subagent's first view", second, "Input schema:")
	for _, v := range [][]string{one, two} {
		has("a subagent's second view", v[1], "continues after your answer to request", "## New since your last answer", "**tool result** for Bash")
		lacks("a subagent's second view", v[1], "## System prompt", "## Tools", "**prompt**")
	}
	has("the lead's second view", lead[1], "lead continues after your answer to request 1.", "**tool result** for Agent",
		"The command printed relay-one.", "The command printed relay-two.")
	lacks("the lead's second view", lead[1], "## System prompt", "## Tools", "Check both halves of the project at once.")
	index, _ := os.ReadFile(filepath.Join(p.dir, "index.md"))
	if !regexp.MustCompile(`\| agent-\d \(a[0-9a-f]+\) \| 1 \| answered \| tool result \|`).Match(index) {
		t.Errorf("the index does not name the subagents' ids from the lead's results:\n%s", index)
	}
	has("relay-one's result", one[1], "relay-one\n")
	has("relay-two's result", two[1], "relay-two\n")
}

// agentViews returns the views of the subagent whose brief names marker.
func (p *player) agentViews(marker string) []string {
	for label, vs := range p.views {
		if label != "lead" && strings.Contains(vs[0], marker) {
			return vs
		}
	}
	return nil
}

func (p *player) labels() []string {
	var out []string
	for l := range p.views {
		out = append(out, l)
	}
	return out
}

func requestNumber(view string) int {
	var n int
	if m := viewHead.FindStringSubmatch(view); m != nil {
		fmt.Sscan(m[1], &n)
	}
	return n
}
