// Package search holds the tools that find things: Glob (file names), Grep
// (file contents) and LS (a directory's tree). Their names and input fields
// are Claude Code's. Each is a tool.Spec made a tool by tool.New.
//
// Glob decisions:
//
//   - Patterns are doublestar globs over the directory in path (default
//     Env.Cwd; a relative path resolves against it, by tool.ResolvePath as
//     Grep's path does). An absolute pattern carries its own root and path
//     is then ignored.
//   - Only files are listed, most recently modified first (ties by path),
//     at most 100, with a note when more matched. Symbolic links are listed
//     but not followed. Every .git directory is invisible; nothing else is
//     filtered (hidden files match, ignore files are not consulted): a
//     glob lists what it says.
//
// Grep decisions:
//
//   - Two backends, one behaviour. When rg is on PATH it is run directly
//     (never through a shell) with arguments that pin everything down: no
//     config file, no global gitignore, output sorted by path, the file type
//     defined from this package's table. Otherwise, or with BackendGo, a Go
//     implementation walks and searches with the same rules and prints the
//     same bytes. A shared test table runs through both.
//   - Filtering follows ripgrep's defaults and precedence: --glob overrides
//     first (a match decides; with any include glob, other files are out),
//     then .rgignore, .ignore, .gitignore and .git/info/exclude (nearest
//     directory first within each kind; .gitignore only inside a git
//     repository and not above its root; .ignore files from every parent),
//     then the type, then hidden names (a leading dot). Binary files are
//     skipped. A path given explicitly is always searched.
//   - Patterns are compiled by Go's regexp (RE2 syntax) before either
//     backend runs, so a bad pattern fails the same way everywhere, and a
//     literal line break outside multiline mode is refused as rg refuses it.
//     Differences from rg's Rust engine: \d, \w, \s and \b are ASCII-only
//     in Go and Unicode-aware in Rust; Rust's class set operations
//     ([a-z&&[^aeiou]]) do not exist in RE2. Neither has look-around or
//     backreferences.
//   - Known divergences of the Go backend: a file with a NUL byte anywhere
//     is skipped (rg may report matches it found before the NUL in a large
//     file), files over 256 MB are skipped, and the global git excludes
//     file is not read (rg is told not to read it either).
//   - Output: content mode prints rg's "path:line:text" lines ("-" for
//     context lines, "--" between groups); the path is left out when path
//     names a single file. files_with_matches lists files newest first,
//     like Claude Code. count prints "path:N" per file (N = matching lines;
//     with multiline, lines where a match starts) and a total. offset and
//     head_limit page through these lines; long lines are cut to 500
//     characters and the whole reply to 30,000 bytes, each with a note.
//
// Read deny rules (tool.Env.Access, the agent's permission checker): the
// permission check judges the path a call names; what lies under it is
// the tools' to keep out. Glob and LS leave out every file a rule covers,
// name and all, and refuse a root a rule covers. Grep refuses such a root
// and leaves such files out of every output mode — the Go backend skips
// them as it walks; rg is run with --null and --line-number, so that
// paths and match lines can be told apart whatever a file holds, and its
// output is filtered and rebuilt as rg prints it without those flags
// (deny.go) — so a search prints exactly what it would print if the
// denied files did not exist. Below that check, rg runs in the session's
// sandbox (GrepConfig.Sandbox) where what the rules covered at start is
// hidden by the kernel. The Go backend, used when rg is missing or the
// sandbox cannot start, has the filter only; Glob and LS, which return
// names and never contents, are in-process and have the filter only too,
// LS walking the directory it opened (os.Root) and judging names by its
// real path, so a link swapped in after the check lists nothing else.
package search
