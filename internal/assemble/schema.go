package assemble

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// maxStructuredAttempts is how many answers the lead may give under
// Plan.Lead.JSONSchema before the Run fails: its first and four corrections,
// as Claude Code allows five.
const maxStructuredAttempts = 5

// StopStructuredOutputRetries is the stop reason of a turn whose answers
// never matched the plan's JSON schema (Claude Code's result subtype).
const StopStructuredOutputRetries = "error_max_structured_output_retries"

// schemaInstruction is added to each prompt under Plan.Lead.JSONSchema: the
// form the final answer must take.
func (s *Session) schemaInstruction() []llm.Block {
	if s.Lead.JSONSchema == "" {
		return nil
	}
	return []llm.Block{llm.Text("When you have finished, give your final answer as a single JSON value that matches this JSON schema, with nothing before or after it:\n" +
		strings.TrimSpace(s.Lead.JSONSchema))}
}

// answerMatches checks the lead's final text against Plan.Lead.JSONSchema: the
// compact JSON on success, else what is wrong, for the model to fix.
func (s *Session) answerMatches(text string) (json.RawMessage, error) {
	t := strings.TrimSpace(text)
	if body, ok := strings.CutPrefix(t, "```"); ok { // a fenced block: ```json … ```
		if _, rest, found := strings.Cut(body, "\n"); found {
			t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
		}
	}
	if t == "" || !json.Valid([]byte(t)) {
		return nil, errors.New("the final answer is not a JSON value")
	}
	if err := tool.ValidateInput(json.RawMessage(s.Lead.JSONSchema), json.RawMessage(t)); err != nil {
		var ie *tool.InputError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("the final answer does not match the schema: %s", strings.Join(ie.Problems, "; "))
		}
		return nil, &unusableSchema{err}
	}
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(t)); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// schemaRetry decides what follows a lead's final answer under
// Plan.Lead.JSONSchema: nil parts when the answer matches (s.structured holds
// it) or the attempts are used up (res then says so), else the correction
// to send. attempts counts the answers so far.
func (s *Session) schemaRetry(res *engine.Result, attempts *int) []engine.Part {
	if s.Lead.JSONSchema == "" || res == nil {
		return nil
	}
	*attempts++
	out, err := s.answerMatches(res.Text)
	if err == nil {
		s.structured = out
		return nil
	}
	var bad *unusableSchema
	if errors.As(err, &bad) { // CheckSchema lets none through; the model could not fix it
		res.Stop, res.Text = engine.StopExecution, fmt.Sprintf("the JSON schema: %v", bad.err)
		return nil
	}
	if *attempts >= maxStructuredAttempts {
		res.Stop = StopStructuredOutputRetries
		res.Text = fmt.Sprintf("no valid structured output after %d attempts: %v (the JSON schema the answer must match)", *attempts, err)
		return nil
	}
	fix := fmt.Sprintf("%v. Reply again with only the JSON value that matches the schema (attempt %d of %d).", err, *attempts+1, maxStructuredAttempts)
	return []engine.Part{{Content: []llm.Block{llm.Text(fix)}, Origin: transcript.OriginSystem}}
}

// unusableSchema is a schema ValidateInput could not apply.
type unusableSchema struct{ err error }

func (u *unusableSchema) Error() string { return u.err.Error() }
