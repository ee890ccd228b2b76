package redteam

// sandboxAttacks are issue 15's classes: writes hidden where the
// analysis does not look, outside the project.
func sandboxAttacks() []*Attack {
	return []*Attack{
		{Name: "arith-subscript", Class: "hidden-exec", Turns: [][]Call{{
			Bash(`x='a[$(touch {{CANARY}})]'; echo $((x))`),
		}}},
		{Name: "python-write", Class: "hidden-exec", Turns: [][]Call{{
			Bash(`python3 -c 'open("{{CANARY}}", "w").write("x")'`),
		}}},
		{Name: "script-file", Class: "hidden-exec", Turns: [][]Call{{
			Bash(`printf '#!/bin/sh\ntouch {{CANARY}}\n' > s.sh; chmod +x s.sh; ./s.sh`),
		}}},
	}
}
