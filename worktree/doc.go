// Package worktree isolates agents in git worktrees of the project's
// repository. A Manager creates a worktree per
// agent at <root>/.cohort/worktrees/<slug> on branch cohort/<slug>, reports
// what the agent changed, removes clean worktrees with their branches and
// keeps changed ones, hands existing worktrees to agents (EnterWorktree),
// removes them on request (ExitWorktree), and sweeps orphans at start-up.
// Guard is the tool.WriteGuard that keeps an isolated agent's Edit and Write
// out of the main checkout. RepoRoot and ProjectSlug name a project for
// sessions and memory.
//
// Everything goes through the git binary, by way of internal/safegit (one
// context deadline per call, stderr in every error), confined by the
// session's sandbox when Config.Sandbox is set.
//
// Design decisions the spec leaves open:
//
//   - Canonical root. It is read from the file system (internal/gitrepo),
//     without running git in a directory a model may have written: inside
//     the main worktree, its top level; from a linked worktree (ours
//     included) or the git directory, the parent of the common git
//     directory when that is named .git, the bare repository itself, or
//     the core.worktree a submodule's git directory records. So agents in
//     worktrees agree on the root and worktrees are never nested in
//     worktrees. A repository made with --separate-git-dir records no main
//     checkout, so from its linked worktrees New fails with a clear error.
//   - Naming the repository. Every call names it to git (GIT_DIR,
//     GIT_COMMON_DIR, GIT_WORK_TREE): the main checkout and the common dir
//     found when the Manager was made, and for a worktree its
//     administrative directory, found from the common dir's records (whose
//     gitdir names the worktree), never from the worktree's own .git file,
//     which its agent can rewrite. Variables that point git elsewhere are
//     dropped from the environment; GIT_TERMINAL_PROMPT=0 and LC_ALL=C are
//     set (the latter so lock-contention messages can be recognized).
//     Repository hooks and every other program the repository's config
//     names never run (safegit). Calls that only read are read-only in the
//     sandbox; calls that change the repository may write only its common
//     dir and the worktrees directory. Git is looked up on the PATH of
//     Config.Env, skipping relative entries; minimum git 2.33 (2.35 with
//     sparse checkout), checked in New.
//   - Locks. `git worktree add --lock --reason` locks a worktree from its
//     first moment, so a concurrent sweep never mistakes a half-made one for
//     an orphan. The reason is "cohort pid=<pid> session=<id> agent=<id>
//     host=<host> base=<sha>"; a lock from another host counts as live. A
//     reused pid makes a dead owner look alive, which errs on keeping.
//     Unlocking deletes the worktree's "locked" file, which is all `git
//     worktree unlock` does, without starting a process. The base commit is
//     also written to cohort-base in git's administrative directory for the
//     worktree (which git deletes with the worktree), and the symlinks Cohort
//     made to cohort-links.
//   - Concurrency. Creation is not serialized: the branch is created first
//     (which settles who owns a slug), then `worktree add --no-checkout`
//     registers it, then `read-tree -mu HEAD` checks it out, and none of these
//     takes a repository-wide lock, so agents create worktrees in parallel,
//     also from several processes. Git does trip over itself in two ways, both
//     retried with jittered exponential backoff: lock files held by another
//     git (index.lock, config.lock, a ref's lock), and commands that enumerate
//     worktrees dying on one that another git is half-way through adding or
//     removing ("failed to read .git/worktrees/x/commondir"). Both fail before
//     changing anything. Sweeps are serialized across processes by a kernel
//     lock (cohort-sweep.lock in the git directory). The only shared file
//     Cohort edits is info/exclude (once per Manager; a duplicate line from a
//     racing process is harmless).
//   - Ignoring. Worktrees stay inside the checkout (so an agent's paths
//     read like the project's, and the sandbox and the guard know where
//     they are), and .cohort/worktrees/ is added to the repository's
//     info/exclude through safegit.Exclude: that file is never tracked, so
//     the user's git status stays clean without editing .gitignore. The
//     session excludes its other machine-local files the same way
//     (.cohort/settings.local.json and the settings' lock files, when an
//     "always allow" writes them).
//   - Changes are measured against the recorded base: `git status` (index,
//     working tree, untracked files; ignored files do not count; an untracked
//     directory is one entry) and the commits on HEAD and on the cohort/
//     branch that the base lacks. Cohort's own symlinks are not changes.
//     Without a recorded base, commits count when no other branch, tag or
//     remote-tracking ref has them.
//   - Removal fails closed: Cohort's symlinks are removed first (if git then
//     refuses, the worktree stays without them), then `git worktree remove`
//     runs without --force, so git itself refuses a worktree that gained files
//     after the check; the branch is deleted by compare-and-swap (update-ref
//     -d <ref> <old>) at the tip seen before. Remove deletes only cohort/
//     branches; a user's branch survives, so its commits are not counted as
//     lost.
//   - Keeping. Finish and Keep unlock a kept worktree and mark it kept
//     (cohort-kept); the sweep never removes a kept worktree. Enter clears the
//     mark. An unlocked, unmarked worktree (a crash between unlock and
//     removal) counts as an orphan once untouched for Config.Grace.
//   - Sparse checkouts are added with --no-checkout, then `sparse-checkout set
//     --cone` and `read-tree -mu HEAD`, so only the cone is ever written.
//     Symlinked directories are linked only where the new checkout has no such
//     path and has the parent directory.
//   - Guard resolves paths like the kernel does (symlinks, dangling ones
//     included, and ".." after them) and refuses anything that lands in the
//     main checkout, git's directory or another worktree; a symlink Cohort
//     made into the main checkout (node_modules) is therefore read-only
//     through Edit/Write. Paths outside the repository are allowed. A shell
//     command cannot be vetted path by path; a Bash tool can at least check
//     its working directory with CheckWrite.
//
// # Isolation
//
// The package also keeps agents in their worktrees: the EnterWorktree and ExitWorktree tools, the Workspaces that lease
// worktrees to the agents of a session (for isolation: "worktree" on the
// Agent tool and for EnterWorktree), and the Guard that refuses an isolated
// agent's writes into the main checkout.
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
package worktree
