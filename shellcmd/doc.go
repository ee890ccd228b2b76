// Package shellcmd reads a Bash command line without running it and says
// what it would run: every simple command, the wrappers around it, its
// words, the directories it may run in, the files it redirects to or from,
// the variables it sets, and what the analysis could not see. It is the one
// shell analysis behind both the permission rules (permission) and the
// worktree guard (package worktree); each of them keeps its own policy and
// reads the same [Analysis].
//
// # What it decides
//
// A line is parsed with mvdan.cc/sh/v3/syntax (Bash dialect) and walked in
// execution order through ;, &&, ||, |, &, newlines, subshells, { },
// if/case/while/until/for/select bodies, function bodies, [[ ]], arithmetic,
// declarations, time and coproc, command and process substitutions and
// here-documents. Every simple command becomes a [Command].
//
// Words are expanded as far as the text fixes them: quotes removed
// (including $'...'), braces expanded, "~" replaced by Options.Home. A word
// holding a parameter, command or arithmetic expansion is [Word.Dynamic]; a
// word with an unquoted *, ? or [...] is [Word.Glob] and is not matched
// against the file system (callers that care do that themselves, bounded).
// Assignments are not brace-expanded, as in Bash.
//
// Wrappers are unwrapped into [Layer]s, outermost first: env, nohup, nice,
// timeout, stdbuf, time, command, builtin, exec, setsid, ionice, xargs, sudo,
// doas, chroot, watch, busybox, find -exec/-execdir/-ok/-okdir, and shells
// with -c (bash, sh, zsh, dash, ksh, mksh, ash), whose script is parsed in
// turn; so are the texts of eval, su -c, alias, trap and watch. A wrapper
// whose options are not all recognised is marked [Layer.Uncertain].
// Variables set for a command (NAME=value cmd, env NAME=value, sudo
// NAME=value) and by declarations, read, mapfile, getopts and printf -v are
// listed as [Assignment]s; which of them matter is the caller's policy.
//
// cd and pushd are followed as a set of directories: a command after a cd
// may run before or after it (cd x || true, subshells, loops), so cd only
// ever adds a directory, and "" stands for one that cannot be told (cd
// "$dir", cd -, popd, a pattern, a relative cd in a line that mentions
// CDPATH). A loop body that moves the directory is walked a second time
// from where the first pass ended, its commands then listing both; when
// the second pass moves it again, the directory after that is unknown. A
// function's body is walked where it is defined and again wherever it is
// called.
//
// Redirections are opened before their command runs, so they are listed
// with the directories before it (cd x > f writes ./f). A target that is not
// exactly one static word is dynamic. Duplicating or closing a descriptor
// (2>&1, >&-) is not a file.
//
// # What it cannot see
//
// Anything the text does not hold. What a program does internally (make,
// npm, python -c, a git hook) is invisible: a command is only its words. A
// script read from a file (bash x.sh, source) or from standard input (curl
// | sh, bash <<EOF) and shells of other languages (fish, pwsh) are
// [Hidden]. Values of variables are not followed, so "$f" stays dynamic
// even after f=x. Parts the analysis could not understand at all, for which
// a caller must fail closed, are [Unknown]: a line the parser rejects, a
// command name or a -c/eval script only known at run time, a wrapper option
// that changes what runs in a way not modelled (env -S, env -C), and lines
// past the size limits. Code hidden in the value of a variable that Bash
// evaluates as arithmetic or uses as a name ($((x)), ${a[x]}, ${y:x},
// ${!x}, [[ x -eq 1 ]], read 'a[...]', declare -n, ${x@P}; see arith.go)
// is [Hidden] unless every such variable was set to a number on a path
// that always runs first. Things it understood but that can make later
// commands differ from their words (eval, alias, arithmetic evaluation,
// ${x@P}, hash, a cd into the unknown, unrecognised wrapper options) are a
// [Caution].
//
// # Limits
//
// Hostile lines stay cheap: 1 MiB of text, 8 levels of nesting (scripts,
// substitutions, function calls), 5,000 statements walked, 1,000 commands,
// 10,000 words after brace expansion, 64 wrapper layers, 16 tracked
// directories. Past a limit the line gets an [Unknown] note.
//
// Analyze is a pure function of its input and safe for concurrent use.
package shellcmd
