// Package jsonenc writes the JSON of request bodies by hand, for the model
// providers (llm/claude, llm/openai): strings escaped exactly as
// encoding/json escapes them (HTML characters included), caller-given JSON
// (tool schemas, tool input) compacted as it is, never through a map whose
// key order is random, and a per-Model cache of the parts that are the same
// bytes on every request. The same request thus gives the same bytes, which
// prompt caching needs, for a fraction of the CPU of the SDKs' parameter
// types.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cohort-dev/cohort/internal/jsonstr"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json escapes
// it: control characters, quote and backslash, the HTML-sensitive <, > and
// &, U+2028 and U+2029; invalid UTF-8 becomes U+FFFD.
func AppendString(dst []byte, s string) []byte { return jsonstr.AppendHTML(dst, s) }

// appendHTMLEscaped appends valid, compact JSON with <, >, &, U+2028 and
// U+2029 escaped, which is what encoding/json does to the raw JSON a
// json.Marshaler returns. In valid JSON these only occur inside strings.
func appendHTMLEscaped(dst, src []byte) []byte {
	start := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '<' || c == '>' || c == '&' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			start = i + 1
		}
		// U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
		if c == 0xe2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xa8 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xf])
			i += 2
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// CompactObject returns raw compacted and HTML-escaped, or fallback when
// raw is empty. It fails when raw is not a JSON object. Compacting is what
// encoding/json would do on the wire anyway; doing it here makes the error
// for bad JSON ours, with its location.
func CompactObject(raw json.RawMessage, fallback string) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte(fallback), nil
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if buf.Bytes()[0] != '{' {
		return nil, fmt.Errorf("JSON %.40q is not an object", buf.String())
	}
	return appendHTMLEscaped(make([]byte, 0, buf.Len()+16), buf.Bytes()), nil
}
