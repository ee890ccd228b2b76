package sandbox

// Policy is what one kind of sandboxed command may do: the launcher sets
// it up once on a thread of its own and forks every command with it from
// there. Paths are absolute and cleaned. It is built on Cohort's side
// (Sandbox.policy) and sent to the launcher as JSON.
type Policy struct {
	// Writable are the trees commands may write (Landlock).
	Writable []string `json:"writable"`
	// Specials are the writable roots where commands may make FIFOs and
	// device files (the private TMPDIR); in every other root they may
	// not (package doc, "Special files").
	Specials []string `json:"specials,omitempty"`
	// WritableFiles are single files commands may write and truncate,
	// nothing more (Landlock rules on the files): the output files of a
	// hook (Sandbox.LauncherGranting).
	WritableFiles []string `json:"writableFiles,omitempty"`
	// ReadOnly are paths inside writable trees made read-only with a
	// bind mount: a working directory's .git, settings dirs and
	// .mcp.json, the directories of hook scripts.
	ReadOnly []string `json:"readOnly"`
	// ReWritable are writable trees inside a ReadOnly path, bound back
	// writable after it.
	ReWritable []string `json:"reWritable,omitempty"`
	// SelfBound are the directories between a ReadOnly path and its
	// writable root, bound onto themselves: a mount point cannot be
	// renamed or removed, so no command can swap the folder out.
	SelfBound []string `json:"selfBound,omitempty"`
	// FrozenDirs are writable roots whose top level takes no new
	// directory, symlink or special file (a protected directory there
	// does not exist yet); FrozenAll are roots whose top-level entries
	// cannot be added, removed or renamed at all. Landlock: the root
	// itself is granted less, each directory in it the full set.
	FrozenDirs []string `json:"frozenDirs,omitempty"`
	FrozenAll  []string `json:"frozenAll,omitempty"`
	// Why says why each root is frozen; Notes what the policy leaves
	// unprotected. For reports, not sent to the launcher.
	Why   []string `json:"-"`
	Notes []string `json:"-"`
	// Hidden are paths Read deny rules name: a directory is covered by an
	// empty read-only tmpfs, a file by /dev/null, read-only.
	Hidden []string `json:"hidden,omitempty"`
	// Secrets are Cohort's private paths (Config.Secrets), hidden as
	// Hidden is, whatever the rules.
	Secrets []string `json:"secrets,omitempty"`
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
	// "landlock", "mounts", "seccomp", "fifos" (the refusal of special
	// files outside Specials); for an unconfined policy
	// "dumpable" (its commands keep the capabilities that read Cohort).
	Without []string `json:"without,omitempty"`
	// Readable, when set, are the only trees beneath which commands may
	// read files and run programs (Cohort's own programs, Sandbox.Helper):
	// every directory can still be listed, and of /dev only /dev/null
	// (and /dev/urandom, read) can be opened. The launcher opens each with no link followed and grants
	// only directories and regular files (package doc, "Cohort's own
	// programs"). ReadAncestors are the directories whose entries Readable
	// lists one by one; a change in one sets the policy up again (not sent
	// to the launcher).
	Readable      []string `json:"readable,omitempty"`
	ReadAncestors []string `json:"-"`
	// Unreadable are the places Readable leaves out; a writable root that
	// holds one is granted as Readable is, everything beside the way in
	// full and the directories on the way only their entries' making and
	// removing, no file opened.
	Unreadable []string `json:"unreadable,omitempty"`
	// DataLimit, when set, is every command's RLIMIT_DATA (bytes of heap
	// and private writable mappings), set as soon as it is started: for
	// Cohort's own programs, whose endless read of a link to /dev/urandom
	// then fails within seconds.
	DataLimit uint64 `json:"dataLimit,omitempty"`
	// Pinned are writable roots that must be the given directory (device
	// and inode): an agent's working directory held since it was checked
	// (package internal/heldir). The launcher refuses the policy when the
	// path leads elsewhere.
	Pinned []Pin `json:"pinned,omitempty"`
}

// Pin is a writable root's identity.
type Pin struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
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
