// Package cohort is the library API of Cohort, a runtime for teams of
// coding agents: a lead agent that delegates to subagents, background
// agents, forks of itself and named teammates.
//
// Event is the one type every agent's events share; its JSON encoding is a
// line of Claude Code's --output-format stream-json.
package cohort
