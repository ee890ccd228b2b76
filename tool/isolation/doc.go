// Package isolation keeps agents in git worktrees (ARCHITECTURE.md section
// 8): the EnterWorktree and ExitWorktree tools, the Workspaces that lease
// worktrees to the agents of a session (for isolation: "worktree" on the
// Agent tool and for EnterWorktree), and the Guard that refuses an isolated
// agent's writes into the main checkout. The worktrees themselves are the
// worktree package's.
//
// Design decisions the spec leaves open:
//
//   - One guard for file tools and Bash. Guard implements tool.WriteGuard
//     (Edit, Write and NotebookEdit ask it about every path) and
//     shell.CommandGuard (the Bash tool asks it about every command line,
//     foreground or background, before anything runs). A guard travels in
//     tool.Env, so every way an agent can come to work in a worktree —
//     isolated at spawn, a child of an isolated agent, EnterWorktree, a
//     teammate — is covered by the same check, whatever gate or hooks the
//     agent has.
//   - What the Bash check sees. The line is read by package shellcmd (the
//     analysis the permission rules use too) with ScriptArgs on: every
//     simple command in execution order through lists, pipes, subshells,
//     blocks, if/case/loops (a loop body that moves the directory is
//     walked twice, since a cd in one pass moves the next), functions
//     (again wherever they are called), command and process substitutions,
//     here-documents, sh -c / su -c / eval / trap / alias / watch scripts
//     under any wrapper (sudo, env, timeout, xargs, find -exec) and scripts
//     given to a shell among the arguments of other programs (flock f sh -c
//     ..., ssh host sh -c ...). cd, pushd and popd are tracked as a set of
//     directories each command may run in. A command that the permission
//     package counts as read-only on its own (permission.ReadOnlyCommands:
//     a known read-only program, transparent wrappers, harmless variables,
//     and no PATH=..., hash or alias anywhere in the line) may run
//     anywhere, and so may cd itself. Any other command is refused when it
//     may run inside the main checkout (git's directory and the
//     repository's other worktrees count as the main checkout) or in a
//     directory that cannot be told (cd "$x", cd -, a CDPATH in the line),
//     and when any word of any of its layers — also the part after "="
//     (--out=PATH, of=PATH) and after a short option (-oPATH), and the
//     values of the variables set for it — names a path inside the main
//     checkout or a directory above the repository root (rm -r /). Globs
//     are cut back to the directory before their first wildcard. Output
//     redirections must name a file outside the main checkout; a target
//     only known at run time is refused. Setting GIT_DIR, GIT_WORK_TREE and
//     the other variables that point git elsewhere is refused when they
//     name the main checkout or a place only known at run time.
//   - Failing closed. Whatever the analysis could not understand is
//     refused with its reason: a line the parser cannot read, a program
//     name only known at run time ($CMD, also under a wrapper), a -c, eval
//     or alias script built at run time, env -S or env -C, a pattern as a
//     program name, the analysis's size limits (1 MiB, 8 levels of nesting,
//     5,000 parts, 1,000 commands, 10,000 words after brace expansion). A
//     file-changing program (rm, cp, mv, touch, tee, sed -i, ... — the list
//     in command.go) with an operand only known at run time ("$f",
//     $(find ...)) is refused too; variables are not followed.
//   - What it does not see. The check covers what the command line says.
//     Programs and scripts it runs (make, npm, bash x.sh, curl ... | sh,
//     source, a language runtime's own file writes, git hooks) write
//     wherever their own logic takes them, and a symlinked directory that Cohort made into the main
//     checkout (node_modules) is written through by package managers. The
//     guard stops the agent from aiming at the main checkout; it is not a
//     sandbox.
package isolation
