package fakeapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ToolInput reads a tool call's input written in YAML (or JSON, which YAML
// accepts) as a script's tool_use input is: a mapping, returned as compact
// JSON with its keys in the order written. Strings are taken as they are,
// with no placeholders. Empty text is the empty object. line is the line
// of file that data starts on: errors are *ScriptError naming that file's
// line and what to change.
func ToolInput(file string, line int, data []byte) (json.RawMessage, error) {
	p := &parser{file: file, offset: line - 1, literal: true}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg, n := strings.TrimPrefix(err.Error(), "yaml: "), 1
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			n, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		if strings.Contains(msg, "mapping values are not allowed") {
			msg += ` (a value that holds ": " must be quoted, or written as a block: "key: |" with the text indented on the lines below)`
		}
		return nil, p.errf(n, "the input is not valid YAML or JSON: %s", msg)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return json.RawMessage("{}"), nil
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root.Line, "the input must be a mapping of field: value (a JSON object), not a %s", nodeKind(root))
	}
	var buf bytes.Buffer
	if err := p.toJSON(root, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	}
	return "document of another kind"
}
