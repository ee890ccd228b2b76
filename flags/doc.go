// Package flags holds Cohort's feature flags: the registry of every flag with
// its type, default and purpose, and the resolution of their values from the
// places a user can set them.
//
// Precedence, lowest first: the registry default, the settings files'
// "flags" objects (in the order given, so project beats user), the
// environment (COHORT_FLAG_<NAME>), and --flag name=value on the command line
// (a later --flag beats an earlier one). Every resolved value remembers the
// source that set it, which `cohort flags` shows.
//
// Design decisions the spec leaves open:
//
//   - Values have two kinds. Booleans are written 1|true|on or 0|false|off
//     (case-insensitive); numbers are non-negative and written as digits
//     only ("+5", "5.0" and "-1" are refused), capped at 2³¹−1 so a value
//     means the same everywhere. In settings JSON a flag may also be a JSON
//     boolean or a whole JSON number (0/1 for a boolean flag).
//   - An empty COHORT_FLAG_X= counts as unset (the usual shell idiom for
//     clearing a variable), not as a bad value.
//   - Resolve reports every problem at once, each naming the flag, its source
//     and the valid values, and returns no Set: an unknown or malformed flag
//     is a configuration mistake worth stopping for, including a stale
//     COHORT_FLAG_ variable in the environment.
//   - Reading an unregistered name, or a bool flag as an int, panics. Call
//     sites use the name constants, so this can only be a programming error
//     and any test reaching the call catches it.
//   - A Set is immutable after Resolve and a nil *Set reads as defaults, so
//     packages can accept an optional *Set without nil checks.
package flags
