// Package arch holds tests of the project's shape (doc/ARCHITECTURE.md
// draws it): which packages may import which — front ends reach the
// runtime only through package cohort, only cohort imports
// internal/assemble, the engine never imports a front end, providers never
// import the engine, dependencies point one way — that the assembly names
// no flag of the command line, that cmd/cohort links neither goja nor
// reflect.Value.Method and no module beyond a named list (every linked
// package is initialised by `cohort -p` and maps pages of the binary), that
// its start-up (package initialisation, paid by
// every run) allocates within budget, and that every package has a doc
// comment.
package arch
