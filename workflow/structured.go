package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/tool"
)

// structured reads an agent's final text as a JSON value matching schema.
// A fenced ```json block is accepted, as models often add one.
func structured(schema json.RawMessage, text string) (json.RawMessage, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	raw := json.RawMessage(strings.TrimSpace(s))
	if !json.Valid(raw) {
		return nil, fmt.Errorf("the answer is not JSON")
	}
	if err := tool.ValidateInput(schema, raw); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// correction is the follow-up prompt for an answer that missed the schema.
func correction(schema json.RawMessage, err error) string {
	return fmt.Sprintf("Your previous answer could not be used: %v. Reply with only a JSON value that matches this JSON Schema, with no other text:\n%s", err, schema)
}

// schemaInstruction tells the agent the form its answer must take.
func schemaInstruction(schema json.RawMessage) string {
	return fmt.Sprintf("Reply with only a JSON value that matches this JSON Schema, with no other text:\n%s", schema)
}
