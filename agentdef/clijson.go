package agentdef

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CLIPath is the Source.Path of definitions given with --agents.
const CLIPath = "--agents"

// ParseCLI reads the --agents JSON, Claude Code's format: an object mapping
// each agent name to {"description", "prompt", "tools", "model", …} with the
// same field names as the frontmatter. Definitions come back sorted by name.
// A bad entry is an error naming it; the other entries still load. known is
// as for Parse.
func ParseCLI(data string, known []string) ([]*Definition, []Warning, []error) {
	if strings.TrimSpace(data) == "" {
		return nil, nil, nil
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &entries); err != nil {
		return nil, nil, []error{jsonError(data, err)}
	}
	if entries == nil {
		return nil, nil, []error{&ParseError{Path: CLIPath, Message: `want a JSON object {"name": {"description": …, "prompt": …}}, got null`}}
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.Sort(names)

	var (
		defs  []*Definition
		warns []Warning
		errs  []error
	)
	for _, name := range names {
		d, w, err := parseCLIEntry(name, entries[name], known)
		warns = append(warns, w...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defs = append(defs, d)
	}
	return defs, warns, errs
}

func parseCLIEntry(name string, raw json.RawMessage, known []string) (*Definition, []Warning, error) {
	prefix := fmt.Sprintf("agent %q: ", name)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, nil, &ParseError{Path: CLIPath, Message: prefix + err.Error()}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, &ParseError{Path: CLIPath, Message: prefix + "want an object with description and prompt"}
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, nil, &ParseError{Path: CLIPath, Message: prefix + err.Error()}
	}
	dc := newDecoder(CLIPath, -1, prefix, known)
	d := &Definition{Name: name, Source: Source{Level: LevelCLI, Path: CLIPath}}
	dc.definition(&n, d, true)
	if err := dc.err(); err != nil {
		return nil, dc.warns, err
	}
	if d.Prompt == "" {
		dc.warnf(nil, `no "prompt", so the agent has no system prompt`)
	}
	return d, dc.warns, nil
}

// jsonError locates a JSON syntax error by line.
func jsonError(data string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		return &ParseError{Path: CLIPath, Message: `want a JSON object {"name": {"description": …, "prompt": …}}, got ` + typ.Value}
	}
	line := 0
	if off >= 0 && off <= int64(len(data)) {
		line = 1 + bytes.Count([]byte(data[:off]), []byte("\n"))
	}
	return &ParseError{Path: CLIPath, Line: line, Message: "not valid JSON: " + err.Error()}
}
