package argv

// line is one command line as a Claude Code user types it, after -p (the
// runs add --output-format stream-json --verbose in front, which cannot
// change how the rest parses: --verbose takes no value).
type line struct {
	name string
	args []string
}

// The project every line runs in is newProject's.
var lines = []line{
	{"prompt-then-variadic", []string{"-p", "fix the bug", "--allowedTools", "Bash(go test:*)", "Bash(go build:*)"}},
	{"variadic-then-dashdash-prompt", []string{"-p", "--allowedTools", "Bash(go test:*)", "Write", "--", "fix the bug"}},
	{"variadic-swallows-prompt", []string{"-p", "--allowedTools", "Bash(go test:*)", "fix the bug"}},
	{"variadic-swallows-prompt-print-last", []string{"--allowedTools", "Write", "Bash(go build:*)", "fix the bug", "-p"}},
	{"one-value-prose-no-warning", []string{"-p", "--allowedTools", "fix the bug"}},
	{"rule-with-space-is-no-prompt", []string{"-p", "--allowedTools", "Write", "Bash(go test:*)"}},
	{"capitalised-words-are-no-prompt", []string{"-p", "--allowedTools", "Write", "Read Edit"}},
	{"non-ascii-value-warns", []string{"-p", "--allowedTools", "Write", "über"}},
	{"equals-form-then-prompt", []string{"-p", "--allowedTools=Write", "fix the bug"}},
	{"equals-form-takes-one-value", []string{"-p", "--allowedTools=Write", "Bash(go test:*)"}},
	{"repeated-flag", []string{"-p", "--allowedTools", "Write", "--allowedTools", "Bash(go test:*)", "--", "fix the bug"}},
	{"variadic-ended-by-option", []string{"-p", "--allowedTools", "Write", "Bash(go build:*)", "--permission-mode", "default", "fix the bug"}},
	{"comma-list-in-one-value", []string{"-p", "fix the bug", "--allowedTools", "Write,Bash(go test:*)"}},
	{"space-list-in-one-value", []string{"-p", "fix the bug", "--allowedTools", "Write Bash(go build:*)"}},
	{"prompt-first-keeps-later-prose", []string{"-p", "fix the bug", "--allowedTools", "Write", "more words here"}},
	{"dashed-alias-is-variadic", []string{"-p", "--allowed-tools", "Write", "Bash(go test:*)", "--", "fix the bug"}},
	{"disallowed-variadic", []string{"-p", "--disallowedTools", "WebSearch", "NotebookEdit", "--", "fix the bug"}},
	{"disallowed-swallows-prompt", []string{"-p", "--disallowedTools", "WebSearch", "NotebookEdit", "search the web"}},
	{"disallowed-dashed-after-prompt", []string{"-p", "fix the bug", "--disallowed-tools", "WebSearch", "Write"}},
	{"tools-variadic", []string{"-p", "--tools", "Bash", "Read", "Write", "--", "fix the bug"}},
	{"tools-swallows-prompt", []string{"-p", "--tools", "Bash", "Read", "read the readme"}},
	{"tools-equals-list", []string{"-p", "--tools=Bash,Read", "fix the bug"}},
	{"add-dir-variadic", []string{"-p", "--add-dir", "../a", "../b", "--", "fix the bug"}},
	{"add-dir-value-starts-with-dash", []string{"-p", "--add-dir", "-odd", "--", "fix the bug"}},
	{"add-dir-path-with-space-is-no-prompt", []string{"-p", "--add-dir", "../a", "./my dir"}},
	{"add-dir-swallows-prompt", []string{"-p", "--add-dir", "../a", "look in a"}},
	{"mcp-config-variadic", []string{"-p", "--mcp-config", "one.json", "two.json", "--", "fix the bug"}},
	{"mcp-config-equals-form", []string{"-p", "--mcp-config=one.json", "two.json"}},
	{"betas-variadic", []string{"-p", "fix the bug", "--betas", "context-1m-2025-08-07", "fine-grained-tool-streaming-2025-05-14"}},
	{"betas-swallows-prompt", []string{"-p", "--betas", "context-1m-2025-08-07", "fix the bug"}},
	{"first-value-may-start-with-dash", []string{"-p", "--allowedTools", "--verbose", "fix the bug"}},
	{"later-dash-value-is-an-option", []string{"-p", "--allowedTools", "Write", "-x", "fix the bug"}},
	{"dashdash-keeps-dashes-in-prompt", []string{"-p", "--allowedTools", "Write", "--", "--fix the bug"}},
	{"extra-positionals", []string{"-p", "fix the bug", "and this"}},
	{"variadic-without-value", []string{"-p", "fix the bug", "--allowedTools"}},
	{"unknown-flag", []string{"-p", "--allowedTool", "Write", "fix the bug"}},
}
