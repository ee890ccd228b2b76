package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
)

// BenchmarkCheckpoint10kFiles is one turn's checkpoint of a repository of
// 10,000 committed files of which 10 (or none) changed since the last one: wall time, CPU (Cohort's and its git children's) and the bytes the
// store grows by, per checkpoint.
//
//	go test -run XXX -bench Checkpoint10k -benchtime 20x ./checkpoint/
func BenchmarkCheckpoint10kFiles(b *testing.B) {
	dir := b.TempDir()
	for i := range 10000 {
		write(b, dir, fmt.Sprintf("pkg%03d/file%04d.go", i/100, i), fmt.Sprintf("package pkg%03d\n\n// File %d of the benchmark.\nvar V%d = %d\n", i/100, i, i, i), 0o644)
	}
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-q", "-m", "10,000 files")
	repo, err := gitrepo.Read(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(b.Context(), Config{Dir: filepath.Join(b.TempDir(), "checkpoints")})
	if err != nil {
		b.Fatal(err)
	}
	root := Root{Dir: dir, Repo: repo}
	snap(b, s, 0, Before, root) // the session's first: seeds its index
	turn := 0
	for _, changed := range []int{10, 0} {
		b.Run(fmt.Sprintf("changed=%d", changed), func(b *testing.B) {
			var cpu time.Duration
			var grew int64
			for b.Loop() {
				b.StopTimer()
				turn++
				for k := range changed {
					i := (turn*10 + k*997) % 10000
					write(b, dir, fmt.Sprintf("pkg%03d/file%04d.go", i/100, i), fmt.Sprintf("package pkg%03d\n\nvar V%d = %d // turn %d\n", i/100, i, turn, turn), 0o644)
				}
				size0, t0 := dirSize(b, s.Dir()), cpuTime()
				b.StartTimer()
				snap(b, s, turn, Before, root)
				b.StopTimer()
				cpu += cpuTime() - t0
				grew += dirSize(b, s.Dir()) - size0
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(grew)/float64(b.N), "store-B/op")
		})
	}
}

// cpuTime is the CPU time of this process and its reaped children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// dirSize is the bytes of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	return n
}
