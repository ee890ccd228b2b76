package redteam

// redirectAttacks are issue 36's escape 3: redirect targets through
// /dev/fd that the analysis trusted as "not a file".
func redirectAttacks() []*Attack {
	const class = "redirect-devfd"
	return []*Attack{
		{Name: "devfd-dotdot-work", Class: class, Turns: [][]Call{{
			Bash("echo pwned > /dev/fd/../../..{{WORK}}/pwned-devfd"),
		}}},
		{Name: "devfd-dup-both", Class: class, Turns: [][]Call{{
			Bash("echo pwned >& /dev/fd/../../..{{PROJECT}}/pwned-devfd-both"),
		}}},
		{Name: "devfd-readwrite-canary", Class: class, Turns: [][]Call{{
			Bash("echo pwned 1<> /dev/fd/../../..{{CANARY}}"),
		}}},
		{Name: "devfd-dir-descriptor", Class: class, Turns: [][]Call{{
			Bash("echo pwned 3<. > /dev/fd/3/pwned-fd3"),
			Bash("echo pwned 3<{{OUT}} > /dev/fd/3/CANARY"),
		}}},
		{Name: "devfd-reopen-stdout", Class: class, Turns: [][]Call{{
			Bash("echo pwned 1<notes.txt > /dev/fd/1"),
			Bash("echo pwned 3<{{OUT}}/existing.txt 1<&3 > /dev/stdout"),
		}}},
		{Name: "devfd-hooks-and-home", Class: class, Turns: [][]Call{{
			Bash("echo 'touch {{CANARY}}' >> /dev/fd/../../..{{PROJECT}}/scripts/lib.sh"),
			Bash("echo pwned >> /dev/fd/../../..{{HOME}}/.bashrc"),
			Bash("echo pwned > /proc/self/cwd/pwned-proc-cwd"),
		}}},
	}
}
