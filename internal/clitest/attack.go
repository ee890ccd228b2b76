package clitest

import (
	"path/filepath"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// HostileCalls are Bash calls that try to create files under dir, each by
// another route: hidden in an expansion, python -c, redirection, cp, tee,
// a script, cd.
func HostileCalls(dir string) []fakeapi.Block {
	p := func(name string) string { return filepath.Join(dir, name) }
	return []fakeapi.Block{
		Use("Bash", map[string]any{"command": `x='a[$(touch ` + p("expansion") + `)]'; echo $((x))`}),
		Use("Bash", map[string]any{"command": `python3 -c 'open("` + p("python") + `", "w").write("x")'`}),
		Use("Bash", map[string]any{"command": `echo pwned > ` + p("redirect")}),
		Use("Bash", map[string]any{"command": `echo x > src.txt; cp src.txt ` + p("cp")}),
		Use("Bash", map[string]any{"command": `echo x | tee ` + p("tee")}),
		Use("Bash", map[string]any{"command": `printf '#!/bin/sh\ntouch ` + p("script") + `\n' > s.sh; chmod +x s.sh; ./s.sh`}),
		Use("Bash", map[string]any{"command": `cd ` + dir + ` && touch cd`}),
	}
}

// HostileNames names the routes of HostileCalls, in order.
var HostileNames = []string{"expansion", "python", "redirect", "cp", "tee", "script", "cd"}
