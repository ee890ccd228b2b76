// Package arch holds tests of the project's shape: which packages may
// import which (ARCHITECTURE.md section 1: the engine never imports the CLI
// or TUI, providers never import the engine, dependencies point one way),
// and that every package has a doc comment.
package arch
