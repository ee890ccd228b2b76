package shellcmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/shellcmd"
)

func ExampleAnalyze() {
	an := shellcmd.Analyze(`cd src && FOO=1 timeout 60 bash -c 'go test ./... > out.txt' || rm -rf "$tmp"`,
		shellcmd.Options{Dir: "/repo", Home: "/home/me"})
	for _, c := range an.Commands {
		var layers []string
		for _, l := range c.Layers {
			layers = append(layers, "["+l.Name().String()+"]")
		}
		fmt.Println(strings.Join(layers, " "), c.Dirs)
	}
	for _, r := range an.Redirects {
		fmt.Println("writes", r.Target, "in", r.Dirs)
	}
	for _, as := range an.Assigns {
		fmt.Println("sets", as.Name, "for", as.Prefix)
	}
	fmt.Println("understood:", an.Understood())
	// Output:
	// [cd] [/repo]
	// [timeout] [bash] [go] [/repo /repo/src]
	// [rm] [/repo /repo/src]
	// writes out.txt in [/repo /repo/src]
	// sets FOO for true
	// understood: true
}

// BenchmarkAnalyze times the analysis of a typical agent command line.
func BenchmarkAnalyze(b *testing.B) {
	line := `cd src && go test ./... 2>&1 | tail -20 && git add -A && git commit -m "fix: handle empty input" && cp /tmp/x ./out.txt`
	for b.Loop() {
		shellcmd.Analyze(line, shellcmd.Options{Dir: "/repo", Home: "/home/me"})
	}
}
