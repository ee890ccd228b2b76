package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/retry"
)

// Sentinel errors callers may branch on with errors.Is.
var (
	// ErrStalled reports an attempt abandoned because no event arrived for
	// Config.IdleTimeout.
	ErrStalled = errors.New("openai: the server sent nothing for too long")
	// ErrProtocol reports a response that does not follow the streaming
	// grammar of the protocol.
	ErrProtocol = errors.New("openai: malformed response stream")
)

// wireError is an error as compatible servers send it, in any of their
// shapes: OpenAI's {"error": {"message", "type", "param", "code"}}, vLLM's
// top-level {"object": "error", "message", "type", "code"}, llama.cpp's
// numeric code, a bare {"error": "text"}, and the Responses API's error
// event {"type": "error", "code", "message"}.
type wireError struct {
	Message string
	Type    string
	Code    string
}

// parseError finds an error in body; ok is false when body holds none.
func parseError(body []byte) (wireError, bool) {
	var top struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Type    string          `json:"type"`
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &top) != nil {
		return wireError{}, false
	}
	inner := bytes.TrimSpace(top.Error)
	switch {
	case len(inner) > 0 && inner[0] == '{':
		var e struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(inner, &e) != nil {
			return wireError{}, false
		}
		return wireError{Message: e.Message, Type: e.Type, Code: codeText(e.Code)}, true
	case len(inner) > 0 && inner[0] == '"':
		var s string
		json.Unmarshal(inner, &s)
		return wireError{Message: s}, true
	case top.Object == "error", top.Type == "error" && top.Message != "":
		return wireError{Message: top.Message, Type: top.Type, Code: codeText(top.Code)}, true
	case len(top.Detail) > 0 && top.Message == "":
		// FastAPI's {"detail": ...}.
		return wireError{Message: strings.Trim(string(top.Detail), `"`)}, true
	}
	return wireError{}, false
}

// codeText reads a code that is a string or a number.
func codeText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// statusOf is the HTTP status an error inside a 200 response stands for,
// read from its code and type.
func statusOf(e wireError) int {
	if n, err := strconv.Atoi(e.Code); err == nil && n >= 400 && n < 600 {
		return n // llama.cpp and vLLM put the status in the code
	}
	for _, s := range []string{e.Code, e.Type} {
		switch s {
		case "rate_limit_exceeded", "rate_limit_error", "requests", "tokens", "insufficient_quota":
			return http.StatusTooManyRequests
		case "invalid_request_error", "context_length_exceeded", "invalid_prompt", "BadRequestError", "invalid_value":
			return http.StatusBadRequest
		case "authentication_error", "invalid_api_key":
			return http.StatusUnauthorized
		case "permission_error":
			return http.StatusForbidden
		case "not_found_error", "model_not_found", "NotFoundError":
			return http.StatusNotFound
		case "overloaded_error", "server_overloaded":
			return http.StatusServiceUnavailable
		}
	}
	return http.StatusInternalServerError
}

// apiFailure classifies an error the server reported: status is the HTTP
// status, 200 for an error inside a stream or body (then read from the
// error itself).
func apiFailure(status int, e wireError, header http.Header, requestID string, background bool, now time.Time) retry.Failure {
	eff := status
	if eff < 300 {
		eff = statusOf(e)
	}
	ae := &llm.APIError{StatusCode: status, Type: e.Type, Message: e.Message, RequestID: requestID}
	if ae.Type == "" {
		ae.Type = e.Code
	}
	f := retry.Failure{Err: ae}
	if header != nil {
		f.Wait, f.HasWait = retry.RetryAfter(header, now)
		ae.RetryAfter = f.Wait
	}
	switch {
	case e.Code == "insufficient_quota" || e.Type == "insufficient_quota":
		// Waiting does not refill a quota.
	case header != nil && header.Get("x-should-retry") == "false":
		// The server vetoes a retry; it cannot force one.
	case eff == 529:
		f.Retryable = !background
	case eff == http.StatusRequestTimeout, eff == http.StatusConflict, eff == http.StatusTooManyRequests, eff >= 500:
		f.Retryable = true
	}
	return f
}

// statusFailure classifies an error status whose body may or may not hold
// the API's JSON (a proxy's HTML page, say): the message then names the
// status and quotes the start of the body.
func statusFailure(status int, body []byte, header http.Header, requestID string, background bool, now time.Time) retry.Failure {
	e, ok := parseError(body)
	if !ok || e.Message == "" {
		e.Message = fmt.Sprintf("%s; response body: %s", retry.StatusText(status), retry.Snippet(body, 300))
	}
	return apiFailure(status, e, header, requestID, background, now)
}

// bodyError is a 2xx answer that is not an event stream but the JSON of an
// error, as some gateways send one.
type bodyError struct {
	status int
	e      wireError
	header http.Header
}

func (b *bodyError) Error() string {
	return fmt.Sprintf("openai: HTTP %d carried an error instead of an event stream: %s", b.status, b.e.Message)
}

// notStream explains a 2xx answer that is not an event stream.
func notStream(res *http.Response, head []byte) error {
	if e, ok := parseError(head); ok {
		return &bodyError{status: res.StatusCode, e: e, header: res.Header}
	}
	return fmt.Errorf("%w: HTTP %d with content-type %q instead of an event stream; body starts: %q",
		ErrProtocol, res.StatusCode, res.Header.Get("content-type"), retry.Snippet(head, 300))
}

func protocolf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}
