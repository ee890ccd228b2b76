// Package sandbox confines the commands Cohort runs for the model (the
// Bash tool, foreground and background, the user's command hooks and the
// stdio MCP servers, whose programs read what the model wrote) with the Linux kernel: Landlock
// for the file system, plus user, mount, pid and network namespaces and a
// seccomp filter where Landlock cannot express a rule. The permission
// checks decide whether a command may run; the sandbox bounds what it can
// do when they are wrong.
//
// # Profiles: the confinement follows the decision
//
// A Bash command runs in one of two profiles, which the permission
// decision behind it picks (tool.Env.Confinement, zero value read-only):
//
//   - ReadOnly, for a command that runs only because the analysis judged
//     it read-only: every file system is read-only but its private TMPDIR
//     and the device files (/dev/null, ...; not /dev/pts or /dev/shm), the
//     network is cut off (a network namespace of its own; without one,
//     Landlock refuses TCP), and no Unix socket can be made. A wrong
//     read-only verdict then cannot write anything or send what it read.
//     It is one policy for every agent.
//   - Writing, for a command a rule, a mode, a hook or a person approved
//     (and every stdio MCP server, package mcp):
//     the agent's writable set below, protected paths excepted.
//
// Cohort's own programs that work on model-written state (git, through
// internal/safegit) run in a third kind of policy, Sandbox.Helper: the
// read-only profile plus the directories the call names, without the
// TMPDIR, and reading less (below, "Cohort's own programs").
//
// # What a command may do (writing profile)
//
//   - Read anything but what Read deny rules cover (Config.DenyRead):
//     such a path is hidden in the command's mount namespace (an empty
//     read-only tmpfs over a directory, /dev/null over a file). A mount
//     can only cover what exists, so the rules are turned into paths once,
//     when the session starts (permission.Checker.ReadDenials): a literal
//     rule ("./secrets/**") names its path, and a directory hidden whole
//     stays hidden for whatever appears in it later; a pattern
//     ("**/*.pem", ".env") is matched against the tree below its fixed
//     prefix. That search does not enter .git directories the pattern does
//     not name (objects and refs hold nothing a rule means, and are most
//     of a large checkout), and is bounded (200,000 entries, 2,000 paths,
//     5 seconds at start). What it leaves readable is reported, rule by
//     rule, in Config.DenyReadUncovered and so in every Report: a
//     pattern's matches that appear later, a literal path that does not
//     exist yet, a search stopped at its bound. The permission check
//     still applies to all of them. The search runs against the session's
//     directory; an agent in a worktree made later gets the same list,
//     and the report's "later" covers its files; Config.DenyReadIn adds,
//     to the policy of such an agent's cwd, what the rules cover there
//     (its own copy of the denied files), searched when the policy is set
//     up.
//   - Git's object store is hidden too (the common git dir, the working
//     tree's git dir and the alternates' stores) when it holds, as a blob,
//     the current contents of a file the rules cover — committed, staged,
//     packed or written by a tool. The sandbox finds this on its own when
//     a policy is set up, reading loose objects and pack indexes (package
//     internal/gitobj), beside the consumer's search of history, which
//     adds the store through DenyReadIn: a search that wrongly finds
//     nothing still leaves the denied file unreadable through .git (the
//     faultinject build with COHORT_FAULTINJECT=gitstore proves it). Older versions of a denied
//     file are the search's alone.
//   - Write only in its agent's working directory (a worktree for an
//     isolated agent, never the main checkout then), Config.Dirs
//     (additionalDirectories), a private per-session TMPDIR, the user's
//     cache dir ($XDG_CACHE_HOME or ~/.cache, so builds work),
//     sandbox.allowWrite (and the project's memory, which the session adds
//     there), and the usual devices (/dev/null, /dev/tty, /dev/pts,
//     /dev/shm, ...).
//   - Protected paths are kept by the kernel, whole trees at a time, and
//     names that do not exist yet with them. Each working directory's
//     .git is bound read-only whole: the main checkout's git dir, with
//     config, hooks, info, every worktree's commondir and gitdir, and any
//     name a command might add (commondir, config.worktree, hooks/ where
//     it is missing); so sandboxed commands cannot commit in the main
//     checkout (git status works; agents commit in worktrees). A linked
//     worktree's .git file is bound read-only, and an agent working there
//     may write its own git dir (worktrees/<name>/, not its commondir,
//     gitdir or config.worktree) and the shared objects/, refs/ and logs/,
//     so it commits; refs being writable, it can move another branch's
//     ref, never change a file of the main checkout. .cohort/ (the
//     worktrees of other agents with it), .claude/ and .mcp.json are bound
//     read-only whole, and so is the directory of every script a
//     configured hook runs (what it sources there with it; for an agent
//     in a worktree, the worktree's copy too: a hook naming its script
//     relatively runs there). Every folder between a protected path and
//     its writable root is bound onto itself: a mount point cannot be
//     renamed or removed, so `mv .git .gitx && mkdir .git` or renaming a
//     hook script's folder and making another fails. Bind mounts cover
//     only what exists, and no placeholder is ever made in the user's
//     tree (git status is the same after a session): where .cohort or
//     .claude is missing, Landlock keeps the top of that working
//     directory from taking any new directory, link or special file
//     (files it takes; each directory in it keeps full rights, and the
//     policy is rebuilt when a directory appears there from outside, the
//     user's or Cohort's file tools'), and the note to the model says so
//     and how the user lifts it. A missing .mcp.json is a file, which only
//     a frozen top could keep out; it is left to the consumer (project MCP
//     servers are approved by what they run, and internal/configtrust
//     does not load a top .mcp.json that appeared while a session could
//     write the project until a person approves it). A hook script that does not
//     exist at the start is the hook package's: it never runs one that
//     appears later. A .git that is a symlink freezes the top whole (no
//     entry added, removed or renamed). A remote job's clone is
//     Config.Disposable: nobody runs git there later but Cohort's own
//     (which runs none of the repository's programs), so its git dir stays
//     writable but hooks and config, and its top is not frozen.
//   - Writable roots are named by paths Cohort resolved, and the launcher
//     opens each with no link followed (openat2 RESOLVE_NO_SYMLINKS): a
//     name that became a link since fails the policy rather than grant
//     where it leads. A child's working directory chosen by an Agent call
//     is held by descriptor from its check on (package internal/heldir)
//     and pinned in the policy (Policy.Pinned): the root must be that very
//     directory, whatever its name leads to when a command starts
//     (TestHeldCwdIsTheCheckedOne).
//   - The repository's layout is read from the file system (package
//     internal/gitrepo), not by running git in the command's directory.
//   - Special files: no FIFO and no device file is made anywhere but in
//     the private TMPDIR (Landlock: the writable roots, /dev/shm and
//     /dev/pts are granted everything else). A FIFO waits, at its open,
//     for a writer that never comes: one the model makes as a folder's
//     .gitignore or a nested repository's .git/HEAD stalled Cohort's own
//     git and the user's next session (internal/redteam's
//     o12-gitignore-fifo). The TMPDIR keeps them because tools make
//     theirs there (GNU make's jobserver, mkfifo in scripts), and it is
//     no tree the user or Cohort's git reads. Unix sockets stay allowed
//     where sockets may be made at all (sandbox.allowUnixSockets): their
//     open(2) fails at once rather than wait. What holds when a FIFO comes
//     from elsewhere (the sandbox off, the user) is Cohort's own: every
//     git it runs has a deadline and dies with its process group
//     (internal/safegit), and a checkpoint looks for such files before it
//     runs git (package checkpoint). A link into the TMPDIR is the next
//     section's.
//     COHORT_SANDBOX_DISABLE=fifos leaves the refusal out (tests):
//     TestNoSpecialFilesOutsideTMPDIR, and internal/redteam's -unrefused
//     rows for what holds beneath it.
//   - No Unix sockets: socket(AF_UNIX) fails (seccomp), so a tmux server,
//     docker, or a Cohort session socket cannot be driven — Landlock ABI 7
//     does not govern connect(2) to pathname sockets. socketpair(2) works.
//     With sandbox.allowUnixSockets set, sockets can be made and the known
//     places (tmux dirs, $COHORT_HOME/sessions, /run/user/<uid>, docker)
//     are hidden instead, except those holding an allowed socket; the
//     report says that other places are reachable then.
//   - sandbox.network "deny": a network namespace of its own (TCP, UDP and
//     DNS all fail), not only Landlock's TCP rules.
//   - No signals to, and no ptrace or /proc access into, processes outside
//     the sandbox (Landlock scopes and the pid namespace): Cohort cannot be
//     signalled and its environment cannot be read.
//
// # Cohort's own programs
//
// Every program Cohort runs itself on state a model may have written (its
// git: checkpoints, the prompt's snapshot, worktrees; Sandbox.Helper)
// opens no FIFO and no device but /dev/null, wherever a link to one lies
// (a ref, packed-refs, objects/info/alternates, the index, info/exclude, a
// config include): its Landlock domain does not grant reading where those
// can be, so the open fails at once with EACCES (Landlock checks it
// before a FIFO's open waits) instead of holding git to its deadline
// (internal/redteam's o13-gitlink-ref-link, a nested repository's
// refs/heads/main linked to a FIFO in the TMPDIR; internal/safegit's
// TestGitOpensNoSpecialFile). Landlock grants are allow-lists, so the
// policy grants every tree but those (Policy.Readable, built by allBut):
// walking down from / toward each place left out, every directory and
// regular file beside the way, each opened with no link followed; every
// directory can still be listed (a listing opens nothing). Left out are:
//
//   - /dev, but /dev/null (read and written) and /dev/urandom (read:
//     git 2.39 takes its temporary files' names from it). An endless read
//     of a link to /dev/urandom is cut by the heap limit of every helper
//     (Policy.DataLimit, RLIMIT_DATA of 512 MiB, set as the program
//     starts): git dies "out of memory" within seconds. A program that
//     has exited (and been reaped) before its limit is set ran to its
//     end: it is not an error. /dev/zero and the rest are not readable.
//   - The private TMPDIR, the only place a sandboxed command can make a
//     FIFO or device file ("Special files"). It is not the helper's own
//     (a helper writes only what its call names); in a session's
//     temporary directory ($COHORT_HOME/tmp/ID, the CLI's case) every
//     session's is left out ($COHORT_HOME/tmp), so another session's
//     command cannot plant one either.
//
// Where the TMPDIR lies inside a tree git must read (Config.TempRoot in
// the project, or a project that holds $COHORT_HOME), that tree's entries
// are granted one by one: the policy lists the directories it walked
// (Policy.ReadAncestors) and is set up again when an entry of one comes
// or goes, so a file made at the top of such a project is read
// (TestGitOpensNoSpecialFile's -tmp-in-project cases). A helper's
// writable root that holds the TMPDIR (a rewind writing such a project)
// is granted the same way (Policy.Unreadable): in full beside the way,
// and on the directories on the way only the making, removing and
// renaming of entries, so git cannot write a file it makes at the very
// top of such a tree until the policy is set up again (git's own writes
// go to .git; a rewind of a file there fails with EACCES and says so).
// The CLI's TMPDIR lies in $COHORT_HOME/tmp, in no project but a home
// that is one. Each rebuild keeps
// the old policy's launcher thread until Close; the rebuilds are rare
// where the TMPDIR is in $COHORT_HOME (its ancestors, /, the home and
// $COHORT_HOME, seldom change), frequent only for a Config.TempRoot in a
// busy directory (tests).
//
// A pipe reached through /proc/PID/fd of a model's process (a pipe's
// inode, which Landlock lets any domain open) should be out of reach too,
// by reasoning not yet by a test: Landlock keeps a domain out of /proc of
// processes in domains not beneath it, and the helper's and a command's
// are siblings. What this does not cover: FIFOs other programs keep outside
// the TMPDIRs and /dev (/run/initctl, mode 0600 and root's), read by a
// Cohort run as that user; the sandbox off, or Landlock left out or
// missing (COHORT_SANDBOX_DISABLE=landlock, a kernel without it), where
// nothing stops the open and the layers beneath hold: the checkpoint's
// scan of the files it knows git opens, and every git's deadline, past
// which a checkpoint root is stalled for the session and the session
// still ends (package checkpoint, blocked.go).
//
// # The launch path
//
// Landlock domains belong to threads, cannot be lifted and stack at most 16
// deep; PR_SET_PDEATHSIG fires when the forking thread exits. So Cohort is
// never restricted. Once per session it starts a launcher: its own binary
// re-executed (an init hook in this package takes over before main, so any
// program linking the package serves), in new user, mount and pid
// namespaces, with an environment that holds nothing of Cohort's. It is
// started from a locked OS thread that lives while any launcher does, and
// sets PR_SET_PDEATHSIG itself (Go's Pdeathsig cannot be combined with a new
// pid namespace); its connection to Cohort closing is the other signal to
// exit. Being pid 1 of its namespace, it reaps every orphan, and when it
// exits the kernel kills every command left: children die with the session.
//
// The launcher maps its own uid and gid in its user namespace after exec
// (Cohort may be non-dumpable, see below, and then could not write them),
// keeping only the capabilities it needs for that and its mounts, and
// marks every descriptor beyond the standard streams close-on-exec at once
// (its connection to Cohort, fd 3, and whatever Cohort's parent passed
// down): a command inherits its three streams and nothing else
// (cmd/cohort does the same for its own plain children).
//
// For each policy (an agent's working directory) the launcher locks one OS
// thread and restricts it alone: a mount namespace of its own, a network
// namespace when the network is denied, every capability dropped for good
// (securebits, bounding set), no_new_privs, the seccomp filter, then a
// Landlock domain (landlock_restrict_self without TSYNC). Commands are
// forked from that thread (syscall.ForkExec runs on the calling thread) and
// inherit all of it; the thread stays locked until the launcher ends. One
// domain per thread: the 16-layer limit is never near. A command costs a
// request over a SOCK_SEQPACKET socket (its stdio passed with SCM_RIGHTS)
// and a fork of the small launcher, not an exec of the Cohort binary; the
// reply carries a pidfd, through which internal/proc stops the process group
// (PIDFD_SIGNAL_PROCESS_GROUP, Linux 6.9) as it does for its own children,
// and the launcher reports the exit status.
//
// Without a pid namespace (user namespaces unavailable) the launcher is
// its commands' child subreaper: what they leave behind, a process that
// left its group with setsid included, is reparented to it, and it kills
// all of that when its connection to Cohort closes or Cohort's launcher
// thread dies (a parent-death signal it catches, SIGTERM, rather than
// SIGKILL). Config.Unconfined makes such a launcher that confines nothing,
// for the commands that run outside the sandbox (it is off, a call with
// dangerouslyDisableSandbox, excludedCommands): they die with the session
// too. What still escapes is a process another daemon starts on a
// command's behalf (systemd-run, at, an ssh or tmux server already
// running), which was never under the launcher; cgroups would catch those
// only where Cohort is given a delegated cgroup, which it does not assume.
//
// The Landlock system calls are made directly: go-landlock's syscall
// package links libcap's psx into the program for its all-threads calls,
// which a per-thread sandbox does not want in Cohort.
//
// # When the kernel lacks something
//
// Every layer is probed where it is set up, and Report lists what is
// enforced and what is not, in words; the CLI prints what is not once at
// start and cohort doctor prints all of it. Without user namespaces the
// launcher runs as a plain process (still with no environment of Cohort's:
// /proc/$PPID/environ holds no credentials) and protected paths, hidden
// paths, hidden socket places, the pid namespace and network denial are
// reported as not enforced; without Landlock, writes outside the writable
// dirs are, and so are signals when there is no pid namespace either (one
// keeps processes outside from being named). A layer that was expected
// but fails to set up makes the policy refuse to run commands rather than
// run them unconfined. Config.Without leaves layers out on purpose (tests;
// COHORT_SANDBOX_DISABLE in the CLI).
//
// # Cohort non-dumpable
//
// A command outside the sandbox (it is off, dangerouslyDisableSandbox,
// excludedCommands: an unconfined launcher's) runs as Cohort's user in
// Cohort's view of the machine, and so does a sandboxed one where neither
// a pid namespace nor Landlock can be had: Cohort is its grandparent, and
// /proc/<pid>/environ there holds the API keys Cohort was started with
// (its memory holds them whatever their source). So making an unconfined
// sandbox, and setting up such a policy, make Cohort call
// prctl(PR_SET_DUMPABLE, 0) on itself: its /proc entries then belong to
// root, and processes without CAP_SYS_PTRACE cannot read its environment,
// memory or file descriptors, nor ptrace it. Root reads a non-dumpable
// process anyway, with CAP_SYS_PTRACE, and on Linux 6.18 also with
// CAP_SYS_ADMIN or CAP_PERFMON; so an unconfined launcher drops those from
// the bounding set of the thread that forks its commands, and CAP_SYS_MODULE,
// CAP_BPF and CAP_SYS_RAWIO with them: a Cohort run as root runs its
// commands outside the sandbox as root without them (mount, say, fails
// there). It costs what it always costs: no core dumps and no debugger
// attaching to Cohort (gdb -p, dlv attach) for the rest of the process;
// COHORT_SANDBOX_DISABLE=dumpable leaves Cohort dumpable and its unconfined
// commands their capabilities, and the report says what that opens.
// Nothing of Cohort's own needs the flag: exec resets it for every child,
// /proc/<pid>/stat, which the process helpers read, stays readable, and
// the launcher maps its own ids. It is never unset: commands may still be
// running. Where a sandboxed policy without pid namespace or Landlock
// runs as root, the report says the environment is readable.
//
// # Invariants
//
// Each holds below the permission check that decides, and a test proves it
// by making that check wrong, or by going around it:
//
//  1. The confinement follows the decision: a command allowed only as
//     read-only writes nothing outside its TMPDIR and reaches no network.
//     TestReadOnlyProfileWritesNothing, TestReadOnlyProfileNoNetwork (here),
//     tool/shell's TestBashProfileFollowsTheDecision, engine's
//     TestConfinementFollowsTheVerdict, permission's TestDecisionReadOnly,
//     and internal/cli's TestFaultInjectedLayers built with
//     -tags faultinject and the fault readonly (the analysis says yes to
//     everything).
//  2. Cohort never runs a program on model-writable state outside the
//     sandbox: its git goes through internal/safegit (the repository
//     named, its programs off, confined by Helper).
//     internal/safegit's TestRepositoryProgramsDoNotRun,
//     TestRepositoryIsNamedNotDiscovered and TestSandboxedCalls;
//     worktree's TestHooksNeverRun; internal/arch's
//     TestOnlySafegitRunsGit; hook's TestScriptMissingAtStartNeverRuns.
//     The user's command hooks run in the writing profile of the agent's
//     cwd (package hook, "The sandbox"): hook's TestCommandHooksConfined
//     and internal/redteam's o6-hook-indirect, whose hooks run make and
//     python -m on a Makefile and module the model rewrote; only a hook
//     marked "sandbox": false in a file commands cannot write runs
//     outside.
//  3. Protected means the kernel refuses, at directory granularity,
//     missing names and renames included, with nothing written into the
//     user's tree: TestProtectedTreesHold, TestMissingSettingsDirs,
//     TestWorktreeAgentCannotRepointItsRepository,
//     TestWorktreeCopyOfHookScriptsProtected, TestProtectedPathsReadOnly;
//     TestFaultInjectedLayers with the fault noprotected
//     (the permission layer's list empty; this package computes its own).
//     The in-process file tools check their writes against the same
//     computation (Sandbox.WriteRefusal, through tool.Env.Bounds, at the
//     open, on the resolved path), so Write/Edit/MultiEdit/NotebookEdit
//     hold too with that list empty: TestWriteRefusal, and the file-tool
//     forms of TestFaultInjectedLayers.
//  4. Nothing of Cohort's leaks into a command: TestCommandsInheritOnlyStdio
//     (descriptors), TestUnconfinedCommandsCannotReadCohort and
//     TestNoLandlockFallbackHidesCredentials (environment), TestCloseStopsEverything
//     (no process outlives the session); TestFaultInjectedLayers checks
//     all three end to end.
package sandbox
