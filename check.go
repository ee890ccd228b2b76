package cohort

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/assemble"
)

// ConfigError is a Config that cannot work: Field names the Config field,
// and the message says what is wrong and what to do, naming the fields it
// speaks of as Config.Name (a front end may put its own names for them,
// as the command line puts its flags). New returns it before anything is
// written under Home.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string {
	msg := e.Err.Error()
	if strings.Contains(msg, "Config."+e.Field) {
		return msg
	}
	return fmt.Sprintf("%s (Config.%s)", msg, e.Field)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// configError is err as a ConfigError when the session's assembly found
// the Config at fault.
func configError(err error) error {
	var fe *assemble.FieldError
	if errors.As(err, &fe) {
		return &ConfigError{Field: fe.Field, Err: fe.Err}
	}
	return err
}

// check rejects what is wrong in the Config itself, before anything is
// read or written (assemble.Check, on the Config's plan, and the hooks).
// It is the one check of a Config: the command line relies on it for the
// flags it parses into one.
func (c Config) check() error {
	if err := assemble.Check(c.plan()); err != nil {
		return configError(err)
	}
	_, err := c.hookSet()
	return err
}

// hookSet converts the Config's hooks.
func (c Config) hookSet() (*hook.Set, error) {
	if len(c.Hooks) == 0 {
		return nil, nil
	}
	hs := make([]hook.FuncHook, len(c.Hooks))
	for i, h := range c.Hooks {
		fn := h.Func
		var f hook.Func
		if fn != nil {
			f = func(ctx context.Context, in []byte) ([]byte, error) { return fn(ctx, in) }
		}
		hs[i] = hook.FuncHook{Event: hook.Event(h.Event), Matcher: h.Matcher, Func: f, Timeout: h.Timeout}
	}
	set, err := hook.FromFuncs(hs)
	if err != nil {
		return nil, &ConfigError{Field: "Hooks", Err: err}
	}
	return set, nil
}
