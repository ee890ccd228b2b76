//go:build linux

package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// shieldCohort is for a policy whose commands nothing keeps out of Cohort:
// no pid namespace hides it and no Landlock domain stops ptrace and /proc
// access to processes outside. They run as Cohort's user, so they could
// read its environment (/proc/PID/environ, where the API keys it was
// started with are), its memory and file descriptors, and ptrace it. A
// process that is not dumpable has its /proc entries owned by root and
// refuses ptrace to other processes without CAP_SYS_PTRACE, so Cohort
// makes itself so, unless Config.Without has "dumpable". Root is not kept
// out by that, and commands of a Cohort run as root are root: the report
// says so then.
func (s *Sandbox) shieldCohort(rep *Report) {
	const open = "Cohort's environment (/proc/PID/environ, with the API keys Cohort was started with), memory and file descriptors are readable by commands, and they can ptrace it"
	if s.cfg.without("dumpable") {
		rep.NotEnforced = append(rep.NotEnforced, open+": no pid namespace, no Landlock, and Cohort was left dumpable")
		return
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		rep.NotEnforced = append(rep.NotEnforced, fmt.Sprintf("%s: no pid namespace, no Landlock, and Cohort could not make itself non-dumpable (%v)", open, err))
		return
	}
	if os.Geteuid() == 0 {
		rep.NotEnforced = append(rep.NotEnforced, open+": no pid namespace, no Landlock, and commands run as root here, which reads a non-dumpable process too")
		return
	}
	rep.Enforced = append(rep.Enforced, "Cohort's environment, memory and file descriptors are closed to commands, and they cannot ptrace it: Cohort made itself non-dumpable (no pid namespace or Landlock does it here)")
}

// shieldFromUnconfined makes Cohort non-dumpable for a sandbox whose
// commands run outside it (Config.Unconfined): as Cohort's user, outside
// every namespace, they could otherwise read its environment and memory.
// Their launcher drops CAP_SYS_PTRACE (see dropPtrace), without which even
// root cannot read a non-dumpable process. Config.Without "dumpable"
// leaves Cohort dumpable, and the report says so.
func (s *Sandbox) shieldFromUnconfined() *Report {
	rep := &Report{}
	const open = "Cohort's environment (/proc/PID/environ, with the API keys Cohort was started with) and memory are readable by commands that run outside the sandbox"
	if s.cfg.without("dumpable") {
		rep.NotEnforced = append(rep.NotEnforced, open+": Cohort was left dumpable")
		return rep
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		rep.NotEnforced = append(rep.NotEnforced, fmt.Sprintf("%s: Cohort could not make itself non-dumpable (%v)", open, err))
		return rep
	}
	rep.Enforced = append(rep.Enforced, "commands that run outside the sandbox cannot read Cohort's environment or memory, nor ptrace it: Cohort is non-dumpable and they run without CAP_SYS_PTRACE, CAP_SYS_ADMIN and CAP_PERFMON (which only a Cohort run as root has)")
	return rep
}
