// Package conformance checks Cohort against what Claude Code did with its
// users' own files. Its tests read the corpus of real agent definitions and
// settings files in the project's shared/compat directory (README.md and
// SOURCES.md there say where each file comes from) together with
// expected/, the record of what Claude Code 2.1.328 did with each, and
// expected/accepted.json, the divergences judged acceptable and why.
//
// Decisions the issue leaves open:
//
//   - Where the corpus is read from: $COHORT_COMPAT_DIR when set; else
//     shared/compat in the nearest ancestor of the repository that has one
//     (the project keeps its checkout and its shared directory side by
//     side, and worktrees one level deeper); else the copy in the
//     repository's testdata/compat, which is what a fresh clone (CI) has.
//     When the shared corpus and the copy both exist they must be the same
//     files, byte for byte, or TestCorpusCopyIsCurrent fails and says how
//     to refresh the copy. A corpus that cannot be found at all fails the
//     tests: the copy is part of the repository, so its absence is a broken
//     checkout, not a reason to skip.
//   - Agent files are loaded one at a time as project agents
//     (<project>/.claude/agents/) with agent.Load, and compared on whether
//     they load and under which name.
//   - Settings files run a scripted sequence through the cohort binary,
//     with the file unchanged as <project>/.claude/settings.json, a home
//     directory empty but for ~/.claude (which Claude Code creates on its
//     first run, and hooks in the corpus log into) and the six tools
//     pre-approved (--allowedTools), as a
//     user running the sequence would: Write a file, Read it, Edit it,
//     Grep, Glob, then Bash (ls). Each step is "o" when its tool result is
//     not an error and "x" when it is; a prompt the UserPromptSubmit hooks
//     refuse is PROMPT_BLOCKED with "------". The sequence is the one the
//     README describes; its order is fixed by the record of a file whose
//     hook blocks Write, Edit and Bash ("xxxoox": the Read of the file that
//     was never written fails too).
//   - The files' hooks run as they are, against an empty home directory, so
//     the scripts they name are missing. Some outcomes therefore depend on
//     the interpreter the hook starts: "python3 missing.py" exits 2, which
//     blocks, while a missing program exits 127, which does not. A file
//     whose record depends on python3 is reported as not checked, loudly,
//     where python3 is not installed (.ci/run installs it).
//   - Hook inputs are compared with expected/hooks.json's record of a
//     logging hook (disler-loggers): every key Claude Code sent must be
//     there and tool_response must be an object; the keys Cohort adds (its
//     agent fields) are logged. The hook scenarios' other records name
//     scripts that are not in the corpus; the "if" guard among them is
//     rebuilt from its description (TestIfGuardBlocksOnlyItsFiles).
//   - testdata/hook-inputs.json is Claude Code 2.1.332's record of every
//     hook event's input over three runs (TestRecordHookInputs says how
//     to re-record it): tools, a failed request, a model switch sent
//     as an SDK host sends set_model, after the first answer, a custom
//     command named in -p (expand) and a "/compact" between two prompts
//     (compact, recorded only: TestCompactionReopensTheConversation in
//     package cohort checks Cohort against it); each run has a user and a
//     project CLAUDE.md. Every key Claude Code sent must
//     be there; for InstructionsLoaded, the model switch events and the
//     session's start and end the count and the short values (memory
//     type, load reason, models, pricing) must be Claude Code's too.
//   - The tools Claude Code agent files name that Cohort added (WebSearch,
//     MultiEdit, LS) run through the binary too.
//   - A divergence listed in accepted.json is reported with its reason and
//     not counted as a failure; a file listed there that now matches is
//     reported too, so the list can shrink. Nothing is ever added to it by
//     the tests.
package conformance
