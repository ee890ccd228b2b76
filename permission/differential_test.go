package permission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The differential test runs every line the checker calls read-only in a
// real bash, in an empty directory with a PATH of recording shims: a shim
// for each read-only command records its name and runs the real program, a
// shim for each writing command only records. A line the checker passed
// must run nothing but read-only commands (and the shells and transparent
// wrappers it looks through) and leave the directory empty.
//
// COHORT_DIFF_SEED fixes the seed (printed by every run); `go test -fuzz
// FuzzReadOnlyDifferential ./permission/` keeps generating.

// writers are programs the generated lines try to run.
var writers = []string{"touch", "rm", "cp", "mv", "mkdir", "tee", "dd", "python3", "ln", "chmod"}

// passThrough are programs the checker looks through; their shims run the
// real program too.
var passThrough = []string{"bash", "sh", "nohup", "nice", "timeout", "stdbuf", "env", "xargs", "command"}

type shims struct {
	bin, log string
}

func newShims(t testing.TB) *shims {
	dir := t.TempDir()
	s := &shims{bin: filepath.Join(dir, "bin"), log: filepath.Join(dir, "calls.log")}
	if err := os.Mkdir(s.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		script := "#!/bin/sh\necho " + name + " >> " + s.log + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(s.bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for name := range readOnlyCommands() {
		names = append(names, name)
	}
	for _, name := range append(names, passThrough...) {
		if real, err := exec.LookPath(name); err == nil {
			write(name, `exec `+strconv.Quote(real)+` "$@"`)
		} else {
			write(name, "exit 0")
		}
	}
	for _, name := range writers {
		write(name, "exit 0")
	}
	return s
}

// run runs line in bash in an empty directory and returns the programs it
// started and the files it left.
func (s *shims) run(t testing.TB, line string) (calls, files []string) {
	work := t.TempDir()
	_ = os.Remove(s.log)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", line)
	cmd.Dir = work
	// Variables from the environment are as hostile as the line: settings
	// "env" from a cloned repository can set them.
	cmd.Env = []string{"PATH=" + s.bin, "HOME=" + work, "LC_ALL=C",
		"x=a[$(touch env-x)]", "y=$(rm -f env-y)", "i=a[$(mkdir env-i)]"}
	_ = cmd.Run() // the exit status does not matter, only what ran
	data, _ := os.ReadFile(s.log)
	calls = strings.Fields(string(data))
	entries, _ := os.ReadDir(work)
	for _, e := range entries {
		files = append(files, e.Name())
	}
	return calls, files
}

// lineGen builds lines from expansions, subscripts, indirection, test
// operators and command substitutions.
type lineGen struct{ r *rand.Rand }

func (g lineGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g lineGen) name() string { return g.pick("x", "y", "i", "a") }

func (g lineGen) value() string {
	if g.r.IntN(2) == 0 {
		return g.pick("1", "2", "0x1", "'b'", "'a[1]'")
	}
	w := g.pick(writers...)
	return g.pick(`'a[$(`+w+` p)]'`, `"a[\$(`+w+` q)]"`, `'$(`+w+` r)'`, "1", "0x1", "'b'", "'x'", "'a[1]'", `'y[$(echo 1)]'`, `"$(echo 'a[$(`+w+` s)]')"`)
}

func (g lineGen) varRef() string {
	v := g.name()
	return g.pick(v, "$"+v, "${"+v+"}", "a["+v+"]", "1", "$#", "'"+v+"'")
}

func (g lineGen) expansion() string {
	v, r := g.name(), g.varRef()
	switch g.r.IntN(16) {
	case 0:
		return "$((" + r + "))"
	case 1:
		return "$[" + r + "]"
	case 2:
		return "${a[" + r + "]}"
	case 3:
		return "${" + v + ":" + r + "}"
	case 4:
		return "${" + v + ":0:" + r + "}"
	case 5:
		return "${!" + v + "}"
	case 6:
		return "${" + v + "@P}"
	case 7:
		return "${#" + v + "}"
	case 8:
		return "\"$" + v + "\""
	case 9:
		return "${a[@]}"
	case 10:
		return "$((1 + 2))"
	case 11:
		return "${" + v + ":-$((" + r + "))}"
	case 12:
		return "$(" + g.simple() + ")"
	case 13:
		return "${!a[@]}"
	case 14:
		return "$((" + r + " + " + g.varRef() + "))"
	}
	return "${" + v + "@Q}"
}

func (g lineGen) nameArg() string {
	w := g.pick(writers...)
	return g.pick(g.name(), `'a[$(`+w+` t)]'`, "a["+g.varRef()+"]", "a[1]", "\"$"+g.name()+"\"")
}

func (g lineGen) test() string {
	switch g.r.IntN(6) {
	case 0:
		return "[[ " + g.varRef() + " -eq " + g.pick("1", g.varRef()) + " ]]"
	case 1:
		return "[[ -v " + g.nameArg() + " ]]"
	case 2:
		return "test -v " + g.nameArg()
	case 3:
		return "[ " + g.expansion() + " -lt 2 ]"
	case 4:
		return "[[ -n " + g.expansion() + " ]]"
	}
	return "[[ " + g.expansion() + " == x ]]"
}

func (g lineGen) simple() string {
	switch g.r.IntN(13) {
	case 0:
		return g.name() + "=" + g.value()
	case 1, 12:
		return g.pick("echo hi", "cat f", "ls", "true", "printf %s x", "grep -r x .")
	case 2:
		return "a=(1 2)"
	case 3:
		return "echo " + g.expansion() + " " + g.expansion()
	case 4:
		return g.test()
	case 5:
		return "((" + g.varRef() + g.pick("", "++", "+1", " = 1", " += "+g.varRef()) + "))"
	case 6:
		return "read " + g.nameArg() + " <<< v"
	case 7:
		return "printf -v " + g.nameArg() + " %s " + g.expansion()
	case 8:
		return "cat " + g.expansion()
	case 9:
		return g.pick("declare -i ", "declare -n ", "local ", "export ") + g.name() + "=" + g.value()
	case 10:
		return "unset " + g.nameArg()
	}
	return "let " + g.varRef() + g.pick("", "++", "=1")
}

func (g lineGen) stmt() string {
	switch g.r.IntN(8) {
	case 0:
		return "for " + g.name() + " in " + g.value() + "; do " + g.simple() + "; done"
	case 1:
		return "for ((i = 0; i < 2; i++)); do " + g.simple() + "; done"
	case 2:
		return "f() { " + g.simple() + "; }; f " + g.value()
	case 3:
		return g.simple() + g.pick(" && ", " || ", " | ") + g.simple()
	case 4:
		return "(" + g.simple() + ")"
	}
	return g.simple()
}

func (g lineGen) line() string {
	n := 1 + g.r.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.stmt()
	}
	return strings.Join(parts, "; ")
}

// checkLine fails when line is called read-only but runs something else.
func checkLine(t testing.TB, s *shims, line string, seed uint64) bool {
	if !IsReadOnlyCommand(line) {
		return false
	}
	allowed := slices.Concat(passThrough)
	calls, files := s.run(t, line)
	for _, c := range calls {
		if _, ro := readOnlyCommands()[c]; !ro && !slices.Contains(allowed, c) {
			t.Errorf("seed %d: IsReadOnlyCommand(%q) = true, but running it started %s (calls %v)", seed, line, c, calls)
			return true
		}
	}
	if len(files) > 0 {
		t.Errorf("seed %d: IsReadOnlyCommand(%q) = true, but running it created %v", seed, line, files)
	}
	return true
}

func TestReadOnlyDifferential(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Fatal("the differential test needs /bin/bash")
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("COHORT_DIFF_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("COHORT_DIFF_SEED=%q: %v", v, err)
		}
	}
	t.Logf("seed %d (rerun with COHORT_DIFF_SEED=%d)", seed, seed)
	s := newShims(t)
	g := lineGen{rand.New(rand.NewPCG(seed, seed^0x5eed))}
	ran, lines := 0, 3000
	if testing.Short() {
		lines = 300
	}
	for range lines {
		if checkLine(t, s, g.line(), seed) {
			ran++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of %d generated lines were read-only and ran in bash", ran, lines)
	if ran == 0 {
		t.Errorf("seed %d: no generated line was read-only; the generator tests nothing", seed)
	}
}

// The hostile lines of finding 1 and the generator's building blocks, run
// for real: if any is ever called read-only, it must not write.
func FuzzReadOnlyDifferential(f *testing.F) {
	for _, line := range hiddenInArithmetic {
		f.Add(line, uint64(0))
	}
	f.Add("", uint64(1))
	s := newShims(f)
	f.Fuzz(func(t *testing.T, line string, seed uint64) {
		if line == "" {
			line = lineGen{rand.New(rand.NewPCG(seed, seed))}.line()
		}
		checkLine(t, s, line, seed)
	})
}

func ExampleIsReadOnlyCommand_arithmetic() {
	fmt.Println(IsReadOnlyCommand(`x='a[$(touch p)]'; echo $((x))`), IsReadOnlyCommand("echo $((6 * 7))"))
	// Output: false true
}
