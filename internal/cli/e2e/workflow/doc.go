// Package workflow holds the command line's end-to-end tests of cohort
// workflow (run, resume, list, sandboxed and isolated steps, budgets) and
// cohort dream. It has tests only; the harness is internal/clitest.
package workflow
