package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/spelling"
)

// variadicFlags are the options that take several values, as Claude
// Code's command line takes them: --allowedTools Read "Bash(go test:*)".
var variadicFlags = []string{"--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools",
	"--tools", "--add-dir", "--mcp-config", "--betas"}

// argv is a command line read the way Claude Code's parser reads it, put
// into the form cobra parses without guessing.
type argv struct {
	// args are for cobra: each variadic option's values as --flag=value,
	// one per value; --resume ID as --resume=ID when ID is a session id
	// (--resume's value is optional: alone it resumes the latest session,
	// and a word after it that is no session id is the prompt); the rest
	// as given.
	args []string
	// swallowed is the first variadic option whose values end in what
	// reads as a prompt, when the line has no prompt of its own.
	swallowed *swallowed
}

type swallowed struct{ flag, value string }

// readArgv reads args against root's flags: a variadic option takes the
// argument after it, whatever it looks like, and every following one
// that does not start with "-"; any other option that takes a value takes
// the next argument; an argument of the form --flag=value is one value;
// "--" ends the options. It fails only on a variadic option with nothing
// after it.
func readArgv(args []string, root *cobra.Command) (argv, error) {
	var out argv
	prompt := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			prompt = prompt || i+1 < len(args)
			out.args = append(out.args, args[i:]...)
			return out.finish(prompt), nil
		case slices.Contains(variadicFlags, a):
			if i+1 == len(args) {
				return out, usageErr("%s needs at least one value after it (%s Read \"Bash(go test:*)\")", a, a)
			}
			j := i + 2
			for j < len(args) && !optionLike(args[j]) {
				j++
			}
			values := args[i+1 : j]
			for _, v := range values {
				out.args = append(out.args, a+"="+v)
			}
			if last := values[len(values)-1]; out.swallowed == nil && len(values) > 1 && looksLikePrompt(last) {
				out.swallowed = &swallowed{flag: a, value: last}
			}
			i = j - 1
		case (a == "--resume" || a == "-r") && i+1 < len(args) && cohort.ValidSessionID(args[i+1]):
			out.args = append(out.args, "--resume="+args[i+1])
			i++
		case takesValue(root, a) && i+1 < len(args):
			out.args = append(out.args, a, args[i+1])
			i++
		default:
			prompt = prompt || !optionLike(a)
			out.args = append(out.args, a)
		}
	}
	return out.finish(prompt), nil
}

// finish keeps the swallowed value only for a line without a prompt.
func (a argv) finish(prompt bool) argv {
	if prompt {
		a.swallowed = nil
	}
	return a
}

// warn says on w that a prompt was read as an option's value.
func (a argv) warn(w io.Writer) {
	if s := a.swallowed; s != nil {
		fmt.Fprintf(w, "cohort: warning: %q went to %s as one of its values, not to the model as the prompt; put the prompt before %s, or at the end after --\n",
			clipRunes(s.value, 40), s.flag, s.flag)
	}
}

// promptArg is the prompt among the command line's arguments: the first,
// as Claude Code takes it. The others are not used, and a warning on
// stderr names them.
func promptArg(inv *Invocation, args []string) string {
	if len(args) == 0 {
		return ""
	}
	if len(args) > 1 {
		fmt.Fprintf(inv.Stderr, "cohort: warning: the prompt is the first argument, %q; %s not used (quote a prompt of several words)\n",
			clipRunes(args[0], 40), quotedList(args[1:]))
	}
	return args[0]
}

func quotedList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(clipRunes(w, 40))
	}
	if len(q) == 1 {
		return q[0] + " was"
	}
	return strings.Join(q, " ") + " were"
}

// optionLike reports whether an argument is an option rather than a value:
// it starts with "-" and is more than that.
func optionLike(a string) bool { return len(a) > 1 && a[0] == '-' }

// takesValue reports whether a is one of root's options (not in the
// --flag=value form) that needs a value: one with no value of its own
// when given bare (a bool has "true", --resume its "latest").
func takesValue(root *cobra.Command, a string) bool {
	if !optionLike(a) || strings.Contains(a, "=") {
		return false
	}
	fs := root.PersistentFlags()
	f := fs.Lookup(strings.TrimPrefix(a, "--"))
	if !strings.HasPrefix(a, "--") {
		if len(a) != 2 {
			return false // -abc: shorthands together, or an unknown option
		}
		f = fs.ShorthandLookup(a[1:])
	}
	return f != nil && f.NoOptDefVal == ""
}

// looksLikePrompt reports whether an option's value reads as words for the
// model rather than a rule, a tool, a name or a path: it holds a space or
// a non-ASCII character, does not start as a path, a URL or JSON does,
// and, outside parentheses (a rule's pattern), has a word that starts
// with neither a capital letter (tools are capitalised) nor mcp__.
func looksLikePrompt(v string) bool {
	v = strings.TrimSpace(v)
	if !strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || r >= utf8.RuneSelf }) {
		return false
	}
	if startsLikeAPath(v) {
		return false
	}
	if open, end := strings.Index(v, "("), strings.LastIndex(v, ")"); open >= 0 && end > open {
		v = v[:open] + v[end+1:]
	}
	for i, r := range v {
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(v[:i])
			if !unicode.IsSpace(prev) && prev != ',' {
				continue
			}
		}
		if unicode.IsSpace(r) || r == ',' || (r >= 'A' && r <= 'Z') || strings.HasPrefix(v[i:], "mcp__") {
			continue
		}
		return true
	}
	return false
}

// startsLikeAPath reports whether v starts as a path (./, ~, \, /dir/), a
// JSON object or a scheme's URL (name:rest) does.
func startsLikeAPath(v string) bool {
	if strings.ContainsAny(v[:1], ".~{\\") {
		return true
	}
	if rest, ok := strings.CutPrefix(v, "/"); ok {
		if slash := strings.Index(rest, "/"); slash >= 0 && !strings.ContainsFunc(rest[:slash], unicode.IsSpace) {
			return true
		}
	}
	colon := strings.Index(v, ":")
	if colon <= 0 || colon+1 >= len(v) {
		return false
	}
	word := !strings.ContainsFunc(v[:colon], func(r rune) bool {
		return !(r == '_' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
	next, _ := utf8.DecodeRuneInString(v[colon+1:])
	return word && !unicode.IsSpace(next)
}

// clipRunes cuts s to n runes, marking the cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// nearestFlags is the command line's answer to a flag cobra could not
// parse: an unknown flag is named with the known flags nearest to it.
func nearestFlags(cmd *cobra.Command, err error) error {
	msg := err.Error()
	var given string
	if name, ok := strings.CutPrefix(msg, "unknown flag: "); ok {
		given = name
	} else if rest, ok := strings.CutPrefix(msg, "unknown shorthand flag: "); ok {
		if _, in, ok := strings.Cut(rest, " in "); ok {
			given = in
		}
	}
	if given == "" {
		return usageErr("%v", err)
	}
	var known []string
	for _, fs := range []interface{ VisitAll(func(*pflag.Flag)) }{cmd.Flags(), cmd.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) { known = append(known, "--"+f.Name) })
	}
	if near := spelling.Nearest(given, known, 3); len(near) > 0 {
		return usageErr("unknown flag %s; did you mean %s? (cohort --help lists every flag)", given, orList(near))
	}
	return usageErr("unknown flag %s (cohort --help lists every flag)", given)
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
