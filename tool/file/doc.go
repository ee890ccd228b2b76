// Package file holds the tools that read and change files: Read, Write,
// Edit, MultiEdit and NotebookEdit. Their names and input fields are
// Claude Code's. Each is a tool.Spec made a tool by tool.New; a problem the
// model should read is returned as a tool.Failure from anywhere in a call.
//
// Decisions the spec leaves open:
//
//   - Paths must be absolute, as in Claude Code. A relative path is an
//     is_error result that shows the absolute path it would have meant
//     (resolved against Env.Cwd), so the model can retry at once; guessing
//     silently would hide which file was touched. Paths are cleaned
//     (filepath.Clean) and that cleaned form is the key in Env.Files. The
//     check is tool.AbsPath, which every tool taking a file path shares.
//   - Read-before-write: Write (on an existing file), Edit and NotebookEdit
//     need an Env.Files entry for the path whose modification time and size
//     still match the file. A partial read (offset/limit) counts, as in
//     Claude Code. Without an Env.Files cache the rule cannot be checked,
//     and those calls fail closed.
//   - Read shows lines as `cat -n` does: the 1-based number right-aligned in
//     six columns, a tab, the line (a trailing \r is not shown). offset 0 is
//     accepted as 1. Lines longer than 2000 characters are cut with a
//     marker, and one call returns at most 2000 lines and about 100 KB; a
//     note says where to continue. Only regular files are opened, so a FIFO
//     or device can never block a call.
//   - Binary files (a NUL byte in the first 8 KB, or a known binary
//     extension) are refused with a message; PNG, JPEG, GIF and WebP images
//     up to 3.75 MB come back as image blocks. Notebooks (.ipynb) are shown
//     cell by cell with the ids NotebookEdit takes; a cell without an id is
//     addressed as "cell-N" (N counts from 0).
//   - Edit keeps a file's line endings: in a file whose line breaks are all
//     CRLF, old_string and new_string are matched and written with CRLF
//     whatever the model sent. Files are written in place (same inode and
//     permissions), not replaced by a rename.
//   - Every write is vetted by Env.CheckWrite, for the path as given and,
//     when it differs, for the path with symlinks resolved.
//   - Protected paths have two layers: the permission checker's list
//     (Env.Access.Protected) and, independently, the sandbox's own mount
//     list (Env.Bounds: what its commands may not write, missing settings
//     directories included), both asked on the path the write really
//     opens, before any directory is created for it. Only an approved call
//     (a person, or an allow rule naming the path) passes them.
//   - Nothing is checked by name and opened by name after (open.go): a
//     file to read is opened first and judged by where it really is
//     (/proc/self/fd): a regular file, not covered by a Read deny rule,
//     not a process's /proc entry (Cohort's environment is never a file
//     tool's to show). A file to write is opened through os.Root rooted
//     at the agent's write root that holds it (Env.Access.WriteRoots: the
//     working and memory directories; an isolated agent's worktree rather
//     than the main checkout around it), its directory opened through the
//     root and judged by its real path, the file opened relative to that
//     directory without following a link (a link is followed through the
//     root only, and judged where it lands). So a link flipped by a
//     background command between the permission check and the write
//     cannot lead the write anywhere else. A write outside every root, or
//     to a protected path (Env.Access.Protected: git control files,
//     settings, agent definitions, .mcp.json, hook scripts), happens only
//     for a call a person or a rule naming it approved (Env.Approved): a
//     mode, bypassPermissions included, is not enough. Without Env.Access
//     (a tool used outside a session) files are opened by name as before.
//     Elsewhere than Linux the real path is the name opened.
//   - Every tool refuses a path a Read deny rule covers (Env.DeniedRead)
//     before it opens anything, Write and the editing tools included:
//     each shows what it opens (Edit a snippet, Write and NotebookEdit the
//     original). The permission check has the same rule; this one holds
//     when the check is wrong.
//   - Notebooks are written back as Jupyter writes them: keys sorted, one
//     space of indentation, non-ASCII text unescaped, a final newline.
package file
