//go:build linux

package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The three Landlock system calls, for one thread. go-landlock's syscall
// package has them too, but it links libcap's psx (C code that wraps
// pthread_create in the whole program) for its all-threads calls, which
// Cohort must not have: the sandbox restricts one launcher thread at a
// time, never Cohort.

// Landlock file-system access rights (uapi/linux/landlock.h).
const (
	llExecute = 1 << iota
	llWriteFile
	llReadFile
	llReadDir
	llRemoveDir
	llRemoveFile
	llMakeChar
	llMakeDir
	llMakeReg
	llMakeSock
	llMakeFifo
	llMakeBlock
	llMakeSym
	llRefer
	llTruncate
	llIoctlDev
)

// Landlock network access rights (ABI 4).
const (
	llNetBindTCP = 1 << iota
	llNetConnectTCP
)

// Landlock scopes (ABI 6).
const (
	llScopeAbstractUnix = 1 << iota
	llScopeSignal
)

type llRulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

const llCreateRulesetVersion = 1

// llABI returns the kernel's Landlock ABI version, or an error.
func llABI() (int, error) {
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, llCreateRulesetVersion)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

func llCreateRuleset(attr *llRulesetAttr, abi int) (int, error) {
	size := unsafe.Sizeof(*attr)
	if abi < 4 {
		size = 8 // handled_access_fs only
	} else if abi < 6 {
		size = 16
	}
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(attr)), size, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

func llAddPathRule(rs int, allowed uint64, fd int) error {
	// The kernel reads the attribute packed: u64 then s32.
	var buf [12]byte
	*(*uint64)(unsafe.Pointer(&buf[0])) = allowed
	*(*int32)(unsafe.Pointer(&buf[8])) = int32(fd)
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&buf[0])), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// llRestrictThread enforces the ruleset on the calling thread only.
func llRestrictThread(rs int) error {
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
