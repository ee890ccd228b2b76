//go:build cohortimports

package main

// Built with -tags cohortimports, the floor client links every package
// cmd/cohort links (through internal/cli) and never calls them: Go
// initialises every linked package when a program starts, so this is the
// floor's peak RSS with Cohort's start-up and its binary's size, and what is
// left between it and cohort is the work Cohort does on the fan-out itself
// (BENCHMARKS.md §15).
import _ "github.com/cohort-dev/cohort/internal/cli"
