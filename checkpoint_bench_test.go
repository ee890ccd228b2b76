package cohort

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// BenchmarkTurnWithCheckpoints is one user turn of the lead on a
// repository of 10,000 committed files of which the user changed 10 since
// the last turn, with the model's pace (500 ms to each reply's first
// token): a Bash call (which waits for the turn's checkpoint), then an
// answer. With checkpoints on and off; ns/op is the turn's wall time
// (from the prompt to the result), cpu-ms/op the CPU of the process and
// its reaped children (git) per turn, both checkpoints included.
//
//	go test -run XXX -bench TurnWithCheckpoints -benchtime 10x .
func BenchmarkTurnWithCheckpoints(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(fmt.Sprintf("checkpoints=%v", on), func(b *testing.B) {
			e := newEnv(b)
			tenThousandFiles(b, e.dir)
			e.rt.on("TURN", func(r *fakeapi.Request) fakeapi.Reply {
				if last := r.Messages[len(r.Messages)-1]; last.Content[0].Type != "tool_result" { // the turn's first request
					return fakeapi.Reply{FirstTokenDelay: 500 * time.Millisecond, Content: []fakeapi.Block{use("Bash", map[string]any{"command": "echo turn >> turns.log"})}}
				}
				return fakeapi.Reply{FirstTokenDelay: 500 * time.Millisecond, Content: []fakeapi.Block{fakeapi.TextBlock("done")}}
			})
			cfg := e.config()
			cfg.PermissionMode = "bypassPermissions"
			cfg.Settings = []string{fmt.Sprintf(`{"checkpoints": {"enabled": %v}}`, on)}
			s := e.open(cfg)
			turn := 0
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				turn++
				for k := range 10 { // the user's edits since the last turn
					i := (turn*10 + k*997) % 10000
					path := filepath.Join(e.dir, fmt.Sprintf("pkg%03d/file%04d.go", i/100, i))
					if err := os.WriteFile(path, fmt.Appendf(nil, "package pkg%03d\n\nvar V%d = %d // turn %d\n", i/100, i, turn, turn), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				t0 := processCPU()
				b.StartTimer()
				collect(b, s, fmt.Sprintf("TURN %d: append to turns.log", turn))
				b.StopTimer()
				// The user reads the answer: the turn's last checkpoint
				// (which a listing of the turns waits for) is done before
				// the next prompt, as it is at a person's pace. Its CPU
				// counts; its time is not the turn's.
				if _, err := s.Rewind(b.Context(), RewindRequest{}); on && err != nil {
					b.Fatal(err)
				}
				cpu += processCPU() - t0
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// tenThousandFiles makes dir a repository of 10,000 committed files.
func tenThousandFiles(b *testing.B, dir string) {
	b.Helper()
	for i := range 10000 {
		path := filepath.Join(dir, fmt.Sprintf("pkg%03d/file%04d.go", i/100, i))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, fmt.Appendf(nil, "package pkg%03d\n\n// File %d of the benchmark.\nvar V%d = %d\n", i/100, i, i, i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "10,000 files"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=u", "-c", "user.email=u@x", "-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// processCPU is the CPU time of this process and its reaped children.
func processCPU() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
