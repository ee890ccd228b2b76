// Package agentsdk holds the tests that drive Cohort with the real Claude
// Agent SDK from npm (@anthropic-ai/claude-agent-sdk, pinned), and the
// same tests with Claude Code itself as the executable, so that they check
// the protocol rather than our reading of it. testdata/driver.mjs is the
// SDK side: one scenario per run, what it saw printed as JSON lines. The
// model is llm/fakeapi for both executables.
//
// The packages are installed by internal/npmtest into the user's cache
// (pinned, once per machine); without Node the tests skip, saying so.
package agentsdk
