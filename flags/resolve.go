package flags

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Sources a value can come from, as recorded in Value.Source. A settings file
// is recorded by its path.
const (
	SourceDefault = "default"
	SourceCLI     = "--flag"
	// EnvPrefix starts the environment variable of every flag:
	// COHORT_FLAG_<NAME in upper case>.
	EnvPrefix = "COHORT_FLAG_"
)

// maxInt bounds int flags so a value means the same on every platform.
const maxInt = math.MaxInt32

// Sentinel errors wrapped by *Error; branch on them with errors.Is.
var (
	ErrUnknown  = errors.New("unknown flag")
	ErrBadValue = errors.New("bad flag value")
)

// Error reports one flag that could not be resolved: an unknown name or a
// value that does not parse. Err is ErrUnknown or ErrBadValue.
type Error struct {
	Flag   string // the name as written (for env, the lower-cased suffix)
	Source string // where it was written: settings path, "env COHORT_FLAG_X", "--flag"
	Value  string // the offending value, as written
	Err    error
}

func (e *Error) Error() string {
	if errors.Is(e.Err, ErrUnknown) {
		return fmt.Sprintf("unknown flag %q (from %s); known flags: %s",
			e.Flag, e.Source, strings.Join(names(), ", "))
	}
	d, _ := Lookup(e.Flag)
	return fmt.Sprintf("flag %s (from %s): bad value %s; want %s",
		e.Flag, e.Source, e.Value, validValues(d.Kind))
}

func (e *Error) Unwrap() error { return e.Err }

func validValues(k Kind) string {
	if k == KindInt {
		return fmt.Sprintf("a whole number written as digits, 0 to %d", maxInt)
	}
	return "1|true|on or 0|false|off"
}

func names() []string {
	out := make([]string, len(registry))
	for i, d := range registry {
		out[i] = d.Name
	}
	return out
}

// Settings is one settings file's "flags" object, already decoded by
// encoding/json (values are bool, float64, json.Number or string).
type Settings struct {
	// Path names the file; it is recorded as the source of the values it sets.
	Path  string
	Flags map[string]any
}

// Config lists the sources Resolve reads, lowest precedence first within
// each field. Resolve never reads the process environment itself.
type Config struct {
	// Settings are applied in order, so a later file (project, local) beats
	// an earlier one (user).
	Settings []Settings
	// Environ is the environment in os.Environ form. Variables that start
	// with COHORT_FLAG_ set flags; an empty value counts as unset.
	Environ []string
	// CLI holds the arguments of every --flag, each "name=value", in
	// command-line order (a later one wins).
	CLI []string
}

// Resolve computes every flag's value: defaults < settings < environment <
// CLI. All problems are reported together (errors.Join of *Error), and then
// the returned Set is nil.
func Resolve(cfg Config) (*Set, error) {
	vals := defaults()
	var errs []error
	set := func(name, source, raw string, parse func(Def) (int, bool)) {
		i, ok := index[name]
		if !ok {
			errs = append(errs, &Error{Flag: name, Source: source, Value: raw, Err: ErrUnknown})
			return
		}
		v, ok := parse(registry[i])
		if !ok {
			errs = append(errs, &Error{Flag: name, Source: source, Value: raw, Err: ErrBadValue})
			return
		}
		vals[i].Value, vals[i].Source = v, source
	}
	for _, s := range cfg.Settings {
		for _, name := range sortedKeys(s.Flags) {
			raw := s.Flags[name]
			set(name, s.Path, quoteJSON(raw), func(d Def) (int, bool) { return parseJSON(d.Kind, raw) })
		}
	}
	for _, kv := range cfg.Environ {
		key, raw, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(key, EnvPrefix) || raw == "" {
			continue
		}
		name := strings.ToLower(strings.TrimPrefix(key, EnvPrefix))
		set(name, "env "+key, strconv.Quote(raw), func(d Def) (int, bool) { return parseText(d.Kind, raw) })
	}
	for _, arg := range cfg.CLI {
		name, raw, ok := strings.Cut(arg, "=")
		name = strings.TrimSpace(name)
		if !ok {
			errs = append(errs, fmt.Errorf("--flag %q: want name=value, e.g. --flag %s=on", arg, ForkSubagent))
			continue
		}
		set(name, SourceCLI, strconv.Quote(raw), func(d Def) (int, bool) { return parseText(d.Kind, raw) })
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Set{vals: vals}, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func quoteJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// parseText reads the textual syntax shared by the environment and the CLI.
func parseText(k Kind, s string) (int, bool) {
	s = strings.TrimSpace(s)
	if k == KindBool {
		switch strings.ToLower(s) {
		case "1", "true", "on":
			return 1, true
		case "0", "false", "off":
			return 0, true
		}
		return 0, false
	}
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxInt {
		return 0, false
	}
	return n, true
}

// parseJSON reads a settings value: a JSON boolean or number of the right
// kind, or a string in the textual syntax.
func parseJSON(k Kind, v any) (int, bool) {
	switch v := v.(type) {
	case string:
		return parseText(k, v)
	case json.Number:
		return parseText(k, v.String())
	case bool:
		if k != KindBool {
			return 0, false
		}
		if v {
			return 1, true
		}
		return 0, true
	case float64:
		if v != math.Trunc(v) || v < 0 || v > maxInt {
			return 0, false
		}
		if k == KindBool && v > 1 {
			return 0, false
		}
		return int(v), true
	}
	return 0, false
}

func format(k Kind, v int) string {
	if k == KindBool {
		if v != 0 {
			return "on"
		}
		return "off"
	}
	return strconv.Itoa(v)
}
