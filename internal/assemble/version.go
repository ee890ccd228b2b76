package assemble

import "runtime/debug"

// Version is Cohort's version: linked (set at link time), else the module
// version `go install …@vX` recorded, else "0.0.0-devel".
func Version(linked string) string {
	if linked != "" {
		return linked
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			if m.Path == "github.com/cohort-dev/cohort" && m.Version != "" && m.Version != "(devel)" {
				return m.Version
			}
		}
	}
	return "0.0.0-devel"
}
