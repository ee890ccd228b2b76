// Package mcp holds the command line's end-to-end tests of MCP servers
// (stdio, HTTP, a project's approval, an agent's own server) and skills. It
// has tests only; the harness is internal/clitest.
package mcp
