//go:build sdks

package main

// Built with -tags sdks, the floor client links the two official model
// SDKs Cohort links, and never calls them: their package initialisation
// and the pages it touches are all they add, which is what BENCHMARKS.md
// weighs against the 25 MB peak-RSS target.
import (
	_ "github.com/anthropics/anthropic-sdk-go/v2"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/openai/openai-go/v3/responses"
)
