//go:build linux

package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter, installed on a policy thread (and so inherited by
// every command forked from it):
//
//   - socket(AF_UNIX, ...) fails with EPERM unless the policy allows Unix
//     sockets: Landlock ABI 7 does not govern connect(2) to a pathname
//     socket, and a tmux, docker or Cohort session socket runs commands
//     outside the sandbox. socketpair(2) still works: it reaches nobody.
//   - io_uring fails with ENOSYS: its requests are not seen by seccomp.
//   - ptrace, process_vm_readv/writev and pidfd_getfd fail with EPERM.
//     A command is forked from a thread of the launcher, in the same
//     Landlock domain and with the same uid: tracing that thread, or
//     reading or writing its memory, would let it rewrite code that the
//     launcher's other threads — which no policy confines — then run, and
//     pidfd_getfd would hand it the launcher's connection to Cohort.
//     (Commands cannot trace each other either: strace and gdb do not work
//     in the sandbox.)
//   - Another architecture's system call numbers (x32 on amd64) fail, so
//     they cannot bypass the numbers checked here.

const (
	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000
	seccompRetKill  = 0x80000000 // SECCOMP_RET_KILL_PROCESS
	offNr           = 0
	offArch         = 4
	offArg0         = 16
)

func auditArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return 0xc000003e, true
	case "arm64":
		return 0xc00000b7, true
	}
	return 0, false
}

type bpf []unix.SockFilter

func (b *bpf) stmt(code uint16, k uint32) { *b = append(*b, unix.SockFilter{Code: code, K: k}) }
func (b *bpf) jump(code uint16, k uint32, jt, jf uint8) {
	*b = append(*b, unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf})
}

const (
	ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeqK = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jgeK = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	retK = unix.BPF_RET | unix.BPF_K
)

// seccompFilter builds the program.
func seccompFilter(unixSockets bool) (bpf, bool) {
	arch, ok := auditArch()
	if !ok {
		return nil, false
	}
	var p bpf
	p.stmt(ldW, offArch)
	p.jump(jeqK, arch, 1, 0)
	p.stmt(retK, seccompRetKill)
	p.stmt(ldW, offNr)
	if runtime.GOARCH == "amd64" {
		p.jump(jgeK, 0x40000000, 0, 1) // x32
		p.stmt(retK, seccompRetErrno|uint32(unix.ENOSYS))
	}
	for _, nr := range []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		p.jump(jeqK, nr, 0, 1)
		p.stmt(retK, seccompRetErrno|uint32(unix.ENOSYS))
	}
	for _, nr := range []uint32{unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD} {
		p.jump(jeqK, nr, 0, 1)
		p.stmt(retK, seccompRetErrno|uint32(unix.EPERM))
	}
	if !unixSockets {
		p.jump(jeqK, unix.SYS_SOCKET, 0, 3)
		p.stmt(ldW, offArg0) // the low 32 bits of the domain
		p.jump(jeqK, unix.AF_UNIX, 0, 1)
		p.stmt(retK, seccompRetErrno|uint32(unix.EPERM))
	}
	p.stmt(retK, seccompRetAllow)
	return p, true
}

// installSeccomp installs the filter on the calling thread only; no_new_privs
// must be set.
func installSeccomp(unixSockets bool) error {
	p, ok := seccompFilter(unixSockets)
	if !ok {
		return unix.ENOSYS
	}
	prog := unix.SockFprog{Len: uint16(len(p)), Filter: &p[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(p)
	if errno != 0 {
		return errno
	}
	return nil
}
