//go:build anthropicsdk

package main

// Built with -tags anthropicsdk, the floor client links only the official
// Anthropic SDK: beside -tags sdks, what a print binary that leaves the
// OpenAI SDK to a helper process would save (BENCHMARKS.md §15).
import _ "github.com/anthropics/anthropic-sdk-go/v2"
