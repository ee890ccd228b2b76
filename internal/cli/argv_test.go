package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// FuzzReadArgv: whatever argv is, reading it does not panic, keeps
// everything after "--" as it is, and leaves no variadic option bare for
// cobra (each of its values reaches cobra as --flag=value).
func FuzzReadArgv(f *testing.F) {
	for _, seed := range []string{
		"-p\x00--allowedTools\x00Read\x00Bash(go test:*)\x00fix the bug",
		"--add-dir\x00-odd\x00--\x00--fix",
		"-r\x0012345678-1234-1234-1234-123456789012\x00--tools=Bash\x00x",
		"--betas\x00a\x00b\x00-pc\x00über alles",
	} {
		f.Add(seed)
	}
	root := newRoot(context.Background(), &Invocation{}, &options{})
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		line, err := readArgv(args, root)
		if err != nil {
			if !slices.Contains(variadicFlags, args[len(args)-1]) {
				t.Fatalf("%q: %v, though the last argument is no variadic option", args, err)
			}
			return
		}
		// A "--" right after an option is that option's value (as
		// commander takes it); one after anything else ends the options.
		in, out := slices.Index(args, "--"), slices.Index(line.args, "--")
		ends := in == 0 || in > 0 && !optionLike(args[in-1])
		once := slices.Index(args[in+1:], "--") < 0
		if ends && once && (out < 0 || !slices.Equal(args[in:], line.args[out:])) {
			t.Fatalf("%q: the arguments after -- became %q", args, line.args)
		}
		head := line.args
		if out >= 0 {
			head = line.args[:out]
		}
		for i, a := range head {
			if slices.Contains(variadicFlags, a) && (i == 0 || !takesValue(root, head[i-1])) {
				t.Fatalf("%q: %s reaches cobra bare: %q", args, a, line.args)
			}
		}
	})
}
