package cohort

import "runtime/debug"

// version is set at link time for a release build:
// go build -ldflags "-X github.com/cohort-dev/cohort.version=1.2.3".
var version string

// Version is this build's version: the one set at link time, else the
// module version `go install …@vX` recorded, else "0.0.0-devel".
func Version() string {
	if version != "" {
		return version
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
