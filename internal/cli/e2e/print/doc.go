// Package print holds the command line's end-to-end tests of print mode: its
// output formats (text, json, stream-json) and result fields, stream input,
// the model and provider flags, API retries, --json-schema, compaction,
// resume, traces. It has tests only; the harness is internal/clitest.
package print
