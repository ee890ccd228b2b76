package sandbox

// Policy is what one kind of sandboxed command may do: the launcher sets
// it up once on a thread of its own and forks every command with it from
// there. Paths are absolute and cleaned. It is built on Cohort's side
// (Sandbox.policy) and sent to the launcher as JSON.
type Policy struct {
	// Writable are the trees commands may write (Landlock).
	Writable []string `json:"writable"`
	// ReadOnly are paths inside writable trees made read-only with a
	// bind mount: .git/hooks, .git/config, settings dirs, hook scripts.
	ReadOnly []string `json:"readOnly"`
	// ReWritable are writable trees inside a ReadOnly path, bound back
	// writable after it.
	ReWritable []string `json:"reWritable,omitempty"`
	// Hidden are paths Read deny rules name: a directory is covered by an
	// empty read-only tmpfs, a file by /dev/null, read-only.
	Hidden []string `json:"hidden,omitempty"`
	// UnixSockets lets commands create AF_UNIX sockets (sandbox.
	// allowUnixSockets is set); HiddenSockets then lists places whose
	// sockets are hidden instead.
	UnixSockets   bool     `json:"unixSockets,omitempty"`
	HiddenSockets []string `json:"hiddenSockets,omitempty"`
	// DenyNetwork puts commands in a network namespace of their own
	// (without one, Landlock refuses TCP where it can).
	DenyNetwork bool `json:"denyNetwork,omitempty"`
	// ReadOnlyFS is the read-only profile: Writable holds only the private
	// TMPDIR, and the device directories (/dev/pts, /dev/shm) are not
	// writable either.
	ReadOnlyFS bool `json:"readOnlyFS,omitempty"`
	// Unconfined sets nothing up: commands are forked as the launcher
	// is (Config.Unconfined).
	Unconfined bool `json:"unconfined,omitempty"`
	// Without lists layers to leave out (tests and COHORT_SANDBOX_DISABLE):
	// "landlock", "mounts", "seccomp"; for an unconfined policy
	// "dumpable" (its commands keep the capabilities that read Cohort).
	Without []string `json:"without,omitempty"`
}

// Report says what a policy enforces on this machine and what it does
// not, in words for the user.
type Report struct {
	// Landlock is the ABI version in force, 0 when Landlock is not used.
	Landlock int `json:"landlock"`
	// Namespaces is set when the launcher runs in its own user, mount and
	// pid namespaces.
	Namespaces  bool     `json:"namespaces"`
	Enforced    []string `json:"enforced"`
	NotEnforced []string `json:"notEnforced"`
}

func (p *Policy) without(layer string) bool {
	for _, l := range p.Without {
		if l == layer {
			return true
		}
	}
	return false
}
