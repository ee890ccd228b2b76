// Package sandbox confines the commands Cohort runs for the model (the
// Bash tool, foreground and background) with the Linux kernel: Landlock
// for the file system, plus user, mount, pid and network namespaces and a
// seccomp filter where Landlock cannot express a rule. The permission
// checks decide whether a command may run; the sandbox bounds what it can
// do when they are wrong.
//
// # What a command may do
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
//   - Write only in its agent's working directory (a worktree for an
//     isolated agent, never the main checkout then), Config.Dirs
//     (additionalDirectories), a private per-session TMPDIR, the user's
//     cache dir ($XDG_CACHE_HOME or ~/.cache, so builds work),
//     sandbox.allowWrite, and the usual devices (/dev/null, /dev/tty,
//     /dev/pts, /dev/shm, ...).
//   - Commit: the repository's git dir is writable where git writes on a
//     commit. In the main checkout (.git inside the writable cwd) .git is
//     writable except hooks/ and config; in a linked worktree, its own
//     worktrees/<slug>/ and the shared objects/, refs/ and logs/, never
//     hooks/ or config. Refs being writable, an agent in a worktree can move
//     another branch's ref; it cannot change a file of the main checkout.
//   - Protected paths inside writable trees are read-only (bind mounts, as
//     Landlock cannot carve a path out of an allowed tree): .git/hooks,
//     .git/config, the settings directories .cohort/ and .claude/ of every
//     working directory, and the scripts configured hooks run. A settings
//     directory that does not exist is created, empty (git does not list
//     empty directories), so that a command cannot create settings that
//     would run hooks outside the sandbox in the next session.
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
// # Cohort non-dumpable, when nothing else shields it
//
// With neither a pid namespace nor Landlock, a command runs as Cohort's
// user in Cohort's view of the machine: Cohort is its grandparent, and
// /proc/<pid>/environ there holds the API keys Cohort was started with
// (its memory holds them whatever their source). For such a policy only,
// Cohort calls prctl(PR_SET_DUMPABLE, 0) on itself before the policy's
// first command: its /proc entries then belong to root, and processes
// without CAP_SYS_PTRACE cannot read its environment, memory or file
// descriptors, nor ptrace it. It costs what it always costs: no core dumps
// and no debugger attaching to Cohort (gdb -p, dlv attach) for the rest
// of the process — a price paid only on a machine that offers no other
// shield, and avoidable with COHORT_SANDBOX_DISABLE=dumpable. Nothing of
// Cohort's own needs the flag: a process always reads its own /proc, exec
// resets it for every child, and /proc/<pid>/stat, which the process
// helpers read, stays readable. It is not set where namespaces work,
// because a child cloned into a new user namespace inherits the flag until
// exec, which would keep a non-root Cohort from writing its uid_map and so
// break every later launcher. It is never unset: commands of that policy
// may still be running. Root reads a non-dumpable process anyway, and a
// Cohort run as root without namespaces runs its commands as root, so the
// report then says the environment is readable.
package sandbox
