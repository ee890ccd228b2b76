package agentdef

import (
	"fmt"
	"strings"
)

// Warning is a problem that did not stop a definition from loading: an
// unknown key, a tool name that was dropped, an unsupported field.
type Warning struct {
	// Path is the file ("--agents" for the CLI JSON); Line is 1-based, 0
	// when unknown.
	Path    string
	Line    int
	Message string
}

func (w Warning) String() string { return where(w.Path, w.Line) + w.Message }

// ParseError is a definition that could not be loaded. The other
// definitions still load.
type ParseError struct {
	Path    string
	Line    int // 1-based; 0 when the input has no lines (CLI JSON)
	Message string
}

func (e *ParseError) Error() string { return where(e.Path, e.Line) + e.Message }

func where(path string, line int) string {
	var b strings.Builder
	if path != "" {
		b.WriteString(path)
		if line > 0 {
			fmt.Fprintf(&b, ":%d", line)
		}
		b.WriteString(": ")
	}
	return b.String()
}
