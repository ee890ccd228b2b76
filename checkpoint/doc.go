// Package checkpoint records what a session's agents did to the files
// they worked on, before and after each user turn of the lead, and
// rewinds the files to before any earlier turn.
//
// A Store lives in $COHORT_HOME/checkpoints: a private bare repository
// (store.git) whose objects hold the snapshots, one ref per checkpoint
// (refs/cohort/<session>/<seq>), and sessions/<session>.json, Cohort's
// record of each checkpoint's commit id. Nothing is ever written to the
// user's repository: not a ref, not the index, not the stash, not an
// object. Every git call goes through internal/safegit (sandboxed when the
// session is, repository programs off).
//
// Decisions the spec leaves open:
//
//   - What a snapshot is. For each root (the main checkout, each Cohort
//     worktree, or a folder that is not a repository) the session keeps
//     an index of its own ($COHORT_HOME/checkpoints/index/<session>/...),
//     seeded from the repository's index the first time. `git ls-files -m
//     -o --exclude-standard` lists what changed since the last snapshot by
//     stat data, only those files are hashed (`update-index`, into the
//     store's objects), and `write-tree --missing-ok` writes the tree.
//     Blobs the repository already has are referred to, not copied: a
//     snapshot costs the changed files only. Trees, changed blobs and the
//     repository's index file (its bytes, as a blob) go to the store.
//     Ignored files are not recorded and never touched by a rewind. A
//     folder that is not a repository is snapshotted the same way with the
//     store as its git dir (its .gitignore files still apply). The
//     checkpoint's own tree (each root's tree and index) and its commit
//     are written by Cohort as loose objects, not by git processes (git's
//     mktree and commit-tree when an id is not SHA-1's). Before git, a
//     root is scanned by lstat (see scan: ctimes, which the model cannot
//     set, and entries changed within the clock's tick asked about again);
//     against the root's last snapshot in the process, the scan names the
//     files that can have changed, and git lists only those: a checkpoint
//     of an unchanged tree runs no git, one of a changed tree three
//     processes (ls-files, update-index, write-tree). The store's bare
//     repository is made by Cohort too.
//   - Size. A changed file over Config.MaxFileSize (10 MiB) is recorded
//     by its SHA-256 only and reported as not restorable when it differs
//     at a rewind. Repositories nested in a root and submodules' contents
//     are not recorded (a submodule's commit in the tree is not restored).
//   - Files git would wait on. A FIFO or device where git opens a file of
//     the tree with a blocking open (a folder's .gitignore or
//     .gitattributes, a nested repository's HEAD, commondir or config)
//     is found by the scan and the root gets no git and no checkpoint
//     until it is gone, said once with the file; a git that runs past
//     its deadline anyway stops the root's checkpoints for the Store's
//     life (blocked.go). The scan is the better message, not the guard: a
//     link to a FIFO it does not look at (a nested repository's ref or
//     packed-refs, alternates, an include) fails git's open at once
//     because the session's sandbox grants Cohort's git no read in the
//     commands' TMPDIRs and /dev (package sandbox, "Cohort's own
//     programs"); the checkpoint of that root then fails with git's
//     message. With the sandbox off, the scan and the deadline are all.
//   - Forgery. The model cannot write $COHORT_HOME; still, a checkpoint is
//     used only when its ref holds the commit id Cohort recorded and the
//     commit's bytes hash to that id. Anything else is refused with what
//     was found. The checkpoint's description (roots, trees, index, HEAD)
//     is the commit's message, so the verified id covers it. Blobs read
//     from the user's repository are trusted as git trusts them.
//   - What a snapshot cannot see. The session's sandbox hides what its
//     Read deny rules cover from git, so a snapshot leaves it out, and
//     each record says so (Record.Unseen: the rules with the folders
//     they resolve against, and the hidden folders, in the session file
//     under COHORT_HOME). Every rewind of the session leaves what any of
//     its records' Unseen covers alone, as well as what the rules in
//     force at the rewind cover: a rule given only on the session's
//     command line still holds for `cohort rewind` run later without it.
//   - Damage. A checkpoint whose ref is gone or forged is refused with
//     the turns whose checkpoints are still intact; a root whose objects
//     are partly missing or corrupt gets every file that can be written,
//     one by one, and the error lists the rest.
//   - Checkpoints per turn. Before each user turn of the lead (Before)
//     and when the turn ends (After). A rewind goes back to a Before
//     checkpoint; the paths that differ between an After and the next
//     Before (or the tree at the rewind) were changed outside any agent's
//     turn and count as the user's: the rewind does not overwrite them
//     without Options.Force. Edits of background agents that go on after
//     the lead's turn ended fall into that gap too and are asked about, the
//     safe way round. A rewind first takes a checkpoint of the tree as it
//     is (phase "rewind"), so a rewind can be undone, and one of the tree
//     it leaves (After).
//   - Restoring. Files are written by `git checkout-index` from a
//     temporary index of the checkpoint's tree (git's modes: regular,
//     executable, symlink; other permission bits follow the umask, as in a
//     checkout; a FIFO, socket or device, which git cannot record and
//     which would fail the whole snapshot, is recorded as absent, so a
//     rewind leaves one alone and writes back the file it replaced);
//     files the checkpoint lacks are removed with the
//     directories they leave empty. Protected paths (permission's rule:
//     .git/, .claude/, .mcp.json, .cohort/settings*, .cohort/agents/) and
//     the index are restored only with Options.Protected. A worktree made
//     after the checkpoint is restored to the commit it was made from.
//   - Branches. When the checked-out branch gained commits after the
//     checkpoint, the plan lists them; the branch moves back only with
//     Options.MoveBranch, by compare-and-swap.
//   - Turns. A checkpoint's turn is the lead's user turn in the session,
//     counted on across resumes (a resumed session's first turn follows
//     the last one recorded), and after a rewind too: a turn number is
//     never given twice, so a list of turns names each once. (Stores of
//     older versions can hold a number twice; a rewind to it goes to its
//     latest Before checkpoint.) The SDK's rewind_files
//     names the turn by the uuid of the prompt that started it.
//   - Cost. The Before checkpoint starts with the turn and runs while the
//     first request streams; the tools that write (Bash, Write, Edit,
//     MultiEdit, NotebookEdit) wait for it, read-only tools do not. The
//     After checkpoint runs once the lead's turn has ended; the session
//     waits for it when it closes.
//   - Conversation. A Before checkpoint records where the lead's
//     conversation was (Place: the transcript's boundaries so far and the
//     messages after the last one); the commit's message holds it, so it
//     is verified with the checkpoint. A conversation rewind takes the
//     history back to exactly those messages, from the transcript when
//     the process no longer holds them (a compaction or rewind since, or
//     another process: `cohort rewind --conversation` appends a boundary
//     and the messages to the transcript, and the resume sends the turn's
//     prefix byte for byte). Turn numbers go on across processes: after a
//     rewind by `cohort rewind`, the resumed session's next turn takes the
//     next number, not the rewound one's.
//   - Retention. The settings' "checkpoints" object: keepTurns (100) and
//     keepDays (30) per session, applied to the session's refs when each
//     turn's Before checkpoint is taken (while the turn runs, so that a
//     session's end waits for its last After checkpoint only); `cohort checkpoints prune` applies them to every session and
//     removes the objects only pruned checkpoints needed (git prune, for
//     objects over an hour old). "enabled": false turns checkpoints off.
//   - Outside a session. `cohort rewind` runs without a session (no model,
//     no sandbox: git with the repository's programs off); Session.Rewind
//     refuses during a turn and stops the session's background agents and
//     teammates before it writes.
package checkpoint
