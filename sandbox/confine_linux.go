//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cohort-dev/cohort/internal/heldir"
)

// confine restricts the calling OS thread, which must be locked and stay
// so, to policy p: mounts in a mount namespace of its own, a network
// namespace when the network is denied, no capabilities, the seccomp
// filter, and a Landlock domain. Every command forked from the thread
// inherits all of it; the rest of the launcher is untouched. An error
// means the thread must not fork commands (a layer that was promised
// could not be set up); what is merely unavailable is in the report.
func confine(p *Policy, ns bool) (*Report, error) {
	rep := &Report{Namespaces: ns}
	if p.Unconfined {
		if p.without("dumpable") {
			return rep, nil
		}
		return rep, dropPtrace()
	}
	if ns && !p.without("mounts") {
		if err := mountPolicy(p, rep); err != nil {
			return rep, err
		}
	} else {
		if len(p.ReadOnly) > 0 {
			rep.NotEnforced = append(rep.NotEnforced, "protected paths inside writable directories (.git/hooks, .git/config, settings, hook scripts) stay writable: no mount namespace")
		}
		if len(p.Hidden) > 0 {
			rep.NotEnforced = append(rep.NotEnforced, "Read deny rules are not enforced by the sandbox (the permission check still applies): no mount namespace")
		}
		if len(p.Secrets) > 0 {
			rep.NotEnforced = append(rep.NotEnforced, "Cohort's private files (the job-signing key, teammates' configurations) are not hidden: no mount namespace")
		}
		if len(p.HiddenSockets) > 0 {
			rep.NotEnforced = append(rep.NotEnforced, "with sandbox.allowUnixSockets set, every Unix socket the user can reach can be reached (tmux servers, Cohort sessions, docker): no mount namespace to hide them")
		}
	}
	if p.DenyNetwork {
		if !ns {
			// Landlock refuses TCP below (ABI 4); UDP and DNS stay open.
			rep.NotEnforced = append(rep.NotEnforced, "the network is not cut off (UDP and DNS work; TCP is refused only with Landlock ABI 4 or later): no network namespace")
		} else if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return rep, fmt.Errorf("network namespace: %w", err)
		} else {
			rep.Enforced = append(rep.Enforced, "no network (own network namespace: TCP, UDP and DNS)")
		}
	}
	if ns {
		if err := dropCaps(); err != nil {
			return rep, fmt.Errorf("drop capabilities: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return rep, fmt.Errorf("no_new_privs: %w", err)
	}
	if p.without("seccomp") {
		rep.NotEnforced = append(rep.NotEnforced, "connect to Unix sockets (tmux, docker, Cohort sessions) is not blocked: seccomp left out")
	} else if err := installSeccomp(p.UnixSockets); err != nil {
		rep.NotEnforced = append(rep.NotEnforced, fmt.Sprintf("connect to Unix sockets (tmux, docker, Cohort sessions) is not blocked: seccomp unavailable (%v)", err))
	} else if p.UnixSockets {
		rep.NotEnforced = append(rep.NotEnforced, "with sandbox.allowUnixSockets set, Unix sockets outside the hidden places (tmux, Cohort sessions, the runtime dir, docker) can be reached")
	} else {
		rep.Enforced = append(rep.Enforced, "no Unix sockets (socket(AF_UNIX) is refused; tmux, docker and Cohort session sockets cannot be reached)")
	}
	if p.without("landlock") {
		rep.NotEnforced = append(rep.NotEnforced, "writes outside the writable directories are not blocked: Landlock left out")
		noScopes(p, ns, rep, "Landlock left out")
		return rep, nil
	}
	abi, err := llABI()
	if err != nil || abi < 1 {
		rep.NotEnforced = append(rep.NotEnforced, "writes outside the writable directories are not blocked: the kernel has no Landlock")
		noScopes(p, ns, rep, "the kernel has no Landlock")
		return rep, nil
	}
	if err := restrictThread(p, abi, !ns && p.DenyNetwork, rep); err != nil {
		return rep, fmt.Errorf("landlock: %w", err)
	}
	rep.Landlock = abi
	return rep, nil
}

// noScopes reports what Landlock's scopes would have enforced, for a
// policy without Landlock: signals, and abstract Unix sockets where
// seccomp lets commands make Unix sockets at all. A pid namespace keeps
// processes outside from being named, so signals stay enforced in one.
func noScopes(p *Policy, ns bool, rep *Report, why string) {
	if ns {
		rep.Enforced = append(rep.Enforced, "no signals to processes outside the sandbox (pid namespace: they cannot be named)")
	} else {
		rep.NotEnforced = append(rep.NotEnforced, "signals are not blocked: commands can signal (stop, kill) Cohort and every other process of the user: "+why+", and no pid namespace")
	}
	if p.UnixSockets && !(ns && p.DenyNetwork) { // abstract sockets belong to a network namespace
		rep.NotEnforced = append(rep.NotEnforced, "abstract Unix sockets outside the sandbox can be reached: "+why)
	}
}

// Landlock file-system rights by ABI version.
func handledFS(abi int) uint64 {
	r := uint64(llExecute | llWriteFile | llReadFile | llReadDir | llRemoveDir | llRemoveFile | llMakeChar |
		llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym)
	if abi >= 2 {
		r |= llRefer
	}
	if abi >= 3 {
		r |= llTruncate
	}
	if abi >= 5 {
		r |= llIoctlDev
	}
	return r
}

const fileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev

// devices are the files every command may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// writableDevDirs are device directories commands may write in.
var writableDevDirs = []string{"/dev/pts", "/dev/shm"}

// restrictThread builds the ruleset and enforces it on this thread; with
// denyTCP (no network namespace to cut the network off) Landlock refuses
// TCP connect and bind where it can (ABI 4).
func restrictThread(p *Policy, abi int, denyTCP bool, rep *Report) error {
	handled := handledFS(abi)
	attr := llRulesetAttr{handledFS: handled}
	if abi >= 6 {
		attr.scoped = llScopeSignal | llScopeAbstractUnix
	}
	if denyTCP && abi >= 4 {
		attr.handledNet = llNetBindTCP | llNetConnectTCP // and no rule allows any port
		rep.Enforced = append(rep.Enforced, "no TCP (Landlock)")
	}
	rs, err := llCreateRuleset(&attr, abi)
	if err != nil {
		return err
	}
	defer unix.Close(rs)
	if err := addReads(rs, p, abi, handled); err != nil {
		return err
	}
	if !p.ReadOnlyFS && len(p.Readable) == 0 {
		for _, d := range writableDevDirs {
			_ = addRule(rs, d, handled&^p.noSpecials(d), handled)
		}
	}
	for _, w := range p.Writable {
		if holdsUnreadable(p, w) {
			if err := addWritableAllBut(rs, p, w, handled); err != nil {
				return fmt.Errorf("writable %s: %w", w, err)
			}
			continue
		}
		if err := addWritable(rs, p, w, handled); err != nil {
			return fmt.Errorf("writable %s: %w", w, err)
		}
	}
	addFiles(rs, p, handled)
	if err := llRestrictThread(rs); err != nil {
		return err
	}
	if p.ReadOnlyFS {
		rep.Enforced = append(rep.Enforced, fmt.Sprintf("read-only: no writes but in the private TMPDIR and to device files (Landlock ABI %d)", abi))
	} else {
		rep.Enforced = append(rep.Enforced, fmt.Sprintf("writes only in the writable directories (Landlock ABI %d)", abi))
	}
	if p.without("fifos") {
		rep.NotEnforced = append(rep.NotEnforced, "commands can make FIFOs in the writable directories, on which a later open (git's, an editor's) waits forever: the refusal is left out")
	} else {
		rep.Enforced = append(rep.Enforced, "no FIFOs or device files but in the private TMPDIR (Landlock)")
	}
	if abi >= 6 {
		rep.Enforced = append(rep.Enforced, "no signals to processes outside the sandbox, no abstract Unix sockets outside it (Landlock scopes)")
	} else {
		rep.NotEnforced = append(rep.NotEnforced, fmt.Sprintf("signals to processes outside the sandbox are not blocked (needs Landlock ABI 6, the kernel has %d)", abi))
	}
	return nil
}

// addReads grants reading: everything, /dev's device files written too,
// or for a policy with Readable (Cohort's own programs) every directory
// listed but files read and programs run only beneath Readable, and of
// the devices /dev/null and, read, /dev/urandom alone.
func addReads(rs int, p *Policy, abi int, handled uint64) error {
	read := uint64(llExecute | llReadFile | llReadDir)
	if len(p.Readable) > 0 {
		if err := addRule(rs, "/", llReadDir, handled); err != nil {
			return err
		}
		for _, r := range p.Readable {
			if err := addReadable(rs, r, read, handled); err != nil {
				return fmt.Errorf("readable %s: %w", r, err)
			}
		}
		if err := addRule(rs, "/dev/null", llReadFile|llWriteFile|llTruncate, handled); err != nil {
			return err
		}
		// git 2.39 on Linux takes a temporary file's random name from
		// /dev/urandom; an endless read of it is bounded by DataLimit.
		_ = addRule(rs, "/dev/urandom", llReadFile, handled)
		return nil
	}
	if err := addRule(rs, "/", read, handled); err != nil {
		return err
	}
	if abi >= 5 {
		if err := addRule(rs, "/dev", read|llIoctlDev, handled); err != nil {
			return err
		}
	}
	for _, d := range devices {
		_ = addRule(rs, d, llReadFile|llWriteFile|llTruncate|llIoctlDev, handled) // missing devices are fine
	}
	return nil
}

// makeOther are the rights to make anything but a regular file.
const makeOther = llMakeDir | llMakeSym | llMakeChar | llMakeBlock | llMakeFifo | llMakeSock

// makeSpecial are the rights to make the files an open(2) can block on or
// that are no file at all: FIFOs and devices (package doc, "Special
// files").
const makeSpecial = llMakeFifo | llMakeChar | llMakeBlock

// noSpecials is what a writable root w is not granted: makeSpecial,
// unless w is one of the policy's Specials (the private TMPDIR) or the
// refusal is left out ("fifos").
func (p *Policy) noSpecials(w string) uint64 {
	if p.without("fifos") || slices.Contains(p.Specials, w) {
		return 0
	}
	return makeSpecial
}

// addWritable grants a writable root all rights, or, for a frozen root,
// less on the root itself (Landlock rights flow down, so each directory
// in it is granted the full set on its own): no new directory, symlink
// or special file at its top (FrozenDirs), or no new, removed or renamed
// entry at all (FrozenAll). Directories made in the root later get only
// the root's rights; the policy is rebuilt when they appear.
func addWritable(rs int, p *Policy, w string, handled uint64) error {
	root, err := openRoot(p, w)
	if err != nil {
		return err
	}
	defer root.Close()
	full := handled &^ p.noSpecials(w)
	rights := full
	switch {
	case slices.Contains(p.FrozenAll, w):
		rights &^= makeOther | llMakeReg | llRemoveDir | llRemoveFile | llRefer
	case slices.Contains(p.FrozenDirs, w):
		rights &^= makeOther
	default:
		return llAddPathRule(rs, full, int(root.Fd()))
	}
	if err := llAddPathRule(rs, rights&handled, int(root.Fd())); err != nil {
		return err
	}
	dir, err := unix.Openat(int(root.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	list := os.NewFile(uintptr(dir), w)
	defer list.Close()
	entries, err := list.ReadDir(-1)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		// Relative to the root, with no link followed: a name flipped to
		// a link since it was listed is no directory of this root.
		fd, err := unix.Openat(int(root.Fd()), e.Name(), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			continue
		}
		if err != nil {
			return err
		}
		err = llAddPathRule(rs, full, fd)
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// openRoot opens a writable root with no link followed: Cohort resolved
// every one before sending the policy, so a link on the way now is a
// name that changed since, and the policy is refused rather than grant
// wherever it leads. A pinned root (a held working directory, package
// internal/heldir) must moreover be the very directory Cohort holds.
func openRoot(p *Policy, w string) (*os.File, error) {
	f, err := heldir.OpenNoLinks(w)
	if err != nil {
		return nil, fmt.Errorf("it is not the directory Cohort resolved (a link appeared on the way: %v)", err)
	}
	for _, pin := range p.Pinned {
		if pin.Path != w {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			f.Close()
			return nil, err
		}
		if st.Dev != pin.Dev || st.Ino != pin.Ino {
			f.Close()
			return nil, errors.New("it is not the directory that was checked when the agent was given it (it was replaced since)")
		}
	}
	return f, nil
}

// addRule allows access beneath path (file rights only for a file).
func addRule(rs int, path string, access, handled uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	return llAddPathRule(rs, access&handled, fd)
}

// bind is one bind mount of a policy: a path made read-only, bound
// writable again inside a read-only one, or bound onto itself.
type bind struct {
	path string
	kind int
}

const (
	bindSelf = iota // writable, onto itself: a mount point cannot be renamed
	bindReadOnly
	bindReWritable
)

// binds lists the policy's bind mounts outermost first: a bind of a
// directory made after one below it would cover it.
func binds(p *Policy) []bind {
	var out []bind
	for _, path := range p.SelfBound {
		out = append(out, bind{path, bindSelf})
	}
	for _, path := range p.ReadOnly {
		out = append(out, bind{path, bindReadOnly})
	}
	for _, path := range p.ReWritable {
		out = append(out, bind{path, bindReWritable})
	}
	slices.SortStableFunc(out, func(a, b bind) int {
		return strings.Count(a.path, "/") - strings.Count(b.path, "/")
	})
	return out
}

// mountPolicy gives the thread a mount namespace of its own with the
// policy's protected, self-bound, re-writable and hidden paths.
func mountPolicy(p *Policy, rep *Report) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("mount namespace: %w", err)
	}
	var missing []string
	for _, b := range binds(p) {
		var err error
		switch b.kind {
		case bindReadOnly:
			err = bindReadOnlyAt(b.path, b.path)
		default:
			// A bind takes the flags of the mount it comes through (read-only
			// inside a protected tree); the remount clears that.
			if err = unix.Mount(b.path, b.path, "", unix.MS_BIND, ""); err == nil {
				err = remount(b.path, false)
			}
		}
		if errors.Is(err, unix.ENOENT) && b.kind != bindReWritable {
			missing = append(missing, b.path)
			continue
		}
		if err != nil {
			return fmt.Errorf("bind %s: %w", b.path, err)
		}
	}
	for _, path := range slices.Concat(p.Hidden, p.Secrets, p.HiddenSockets) {
		if err := hide(path); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("hide %s: %w", path, err)
		}
	}
	if len(p.ReadOnly) > 0 {
		rep.Enforced = append(rep.Enforced, "protected paths read-only inside writable directories (the git dir, settings directories, .mcp.json, hook script directories), and the folders above them cannot be renamed")
	}
	if len(missing) > 0 {
		rep.NotEnforced = append(rep.NotEnforced, fmt.Sprintf("%d protected paths vanished before they could be made read-only", len(missing)))
	}
	if len(p.Hidden) > 0 {
		rep.Enforced = append(rep.Enforced, fmt.Sprintf("Read deny rules: the %d paths they cover are hidden", len(p.Hidden)))
	}
	if len(p.Secrets) > 0 {
		rep.Enforced = append(rep.Enforced, "Cohort's private files (the job-signing key, teammates' configurations) are hidden")
	}
	return nil
}

// bindReadOnlyAt bind-mounts src on dst and makes the new mount read-only,
// keeping the flags the kernel locks for a mount from a more privileged
// namespace (nosuid, nodev, noexec, atime).
func bindReadOnlyAt(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return remount(dst, true)
}

// remount changes a bind mount to read-only or writable.
func remount(dst string, readOnly bool) error {
	var sfs unix.Statfs_t
	if err := unix.Statfs(dst, &sfs); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT)
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	for st, ms := range map[int64]uintptr{unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV,
		unix.ST_NOEXEC: unix.MS_NOEXEC, unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME,
		unix.ST_RELATIME: unix.MS_RELATIME} {
		if sfs.Flags&st != 0 {
			flags |= ms
		}
	}
	return unix.Mount("", dst, "", flags, "")
}

// hide covers a directory with an empty read-only tmpfs and a file with
// /dev/null, read-only.
func hide(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
	}
	return bindReadOnlyAt("/dev/null", path)
}

// dropCaps removes every capability from the thread for good: the
// launcher is root in its user namespace, and a command that kept
// CAP_SYS_ADMIN there could unmount the read-only binds.
func dropCaps() error {
	const (
		secbitNoRoot          = 1 << 0
		secbitNoRootLocked    = 1 << 1
		secbitNoSetuidFixup   = 1 << 2
		secbitNoSetuidLocked  = 1 << 3
		secbitKeepCapsLocked  = 1 << 5
		secbitNoAmbientRaise  = 1 << 6
		secbitNoAmbientLocked = 1 << 7
	)
	bits := secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidLocked | secbitKeepCapsLocked | secbitNoAmbientRaise | secbitNoAmbientLocked
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break
		} else if err != nil {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// dropPtrace removes from the bounding set of an unconfined policy's
// thread the capabilities that let a process read a non-dumpable Cohort's
// environment or memory through /proc (CAP_SYS_PTRACE; CAP_SYS_ADMIN and
// CAP_PERFMON open /proc/PID/environ too on Linux 6.18) and load code
// into the kernel that could (CAP_SYS_MODULE, CAP_BPF, CAP_SYS_RAWIO).
// Only a Cohort run as root has them to lose: its commands outside the
// sandbox run as root without these. Not root, there is nothing to drop.
func dropPtrace() error {
	for _, c := range []uintptr{unix.CAP_SYS_PTRACE, unix.CAP_SYS_ADMIN, unix.CAP_PERFMON, unix.CAP_SYS_MODULE, unix.CAP_BPF, unix.CAP_SYS_RAWIO} {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0)
		if err != nil && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	return nil
}
