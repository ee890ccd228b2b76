//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"runtime"

	"github.com/cohort-dev/cohort/internal/proc"
)

// Sandbox is unavailable on this system: New fails, and Cohort runs
// commands unconfined, saying so.
type Sandbox struct{}

var errUnavailable = errors.New("the sandbox needs Linux (Landlock and namespaces); on " + runtime.GOOS + " commands are not confined")

// New reports that there is no sandbox here.
func New(Config) (*Sandbox, error) { return nil, errUnavailable }

func (s *Sandbox) Problems() []string                              { return nil }
func (s *Sandbox) TempDir() string                                 { return "" }
func (s *Sandbox) Env() []string                                   { return nil }
func (s *Sandbox) Start() error                                    { return errUnavailable }
func (s *Sandbox) Report(context.Context, string) (*Report, error) { return nil, errUnavailable }
func (s *Sandbox) ReportFor(context.Context, string, Profile) (*Report, error) {
	return nil, errUnavailable
}
func (s *Sandbox) Launcher(context.Context, string, Profile) (proc.Launcher, error) {
	return nil, errUnavailable
}
func (s *Sandbox) Helper(context.Context, []string) (proc.Launcher, error) {
	return nil, errUnavailable
}
func (s *Sandbox) Writable(string) (writable, protected []string)             { return nil, nil }
func (s *Sandbox) WritableFor(string, Profile) (writable, protected []string) { return nil, nil }
func (s *Sandbox) ExplainFor(string, string, Profile) string                  { return "" }
func (s *Sandbox) WriteRefusal(string, string) string                         { return "" }
func (s *Sandbox) Close() error                                               { return nil }
func (s *Sandbox) AllowWrite(...string) error                                 { return errUnavailable }
func (s *Sandbox) Grant(string, string) (string, error)                       { return "", errUnavailable }
func (s *Sandbox) Grantable(string, string) error                             { return errUnavailable }
func (s *Sandbox) LauncherGranting(context.Context, string, []string) (proc.Launcher, error) {
	return nil, errUnavailable
}
