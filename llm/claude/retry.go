package claude

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/retry"
)

// Sentinel errors callers may branch on with errors.Is.
var (
	// ErrStalled reports an attempt abandoned because no byte arrived for
	// Config.IdleTimeout.
	ErrStalled = errors.New("claude: the API sent nothing for too long")
	// ErrProtocol reports a response that does not follow the Messages API
	// streaming grammar.
	ErrProtocol = errors.New("claude: malformed response stream")
)

// streamStatus maps the error type of an error event inside a 200 stream to
// the HTTP status the API uses for that type, so that one policy covers both.
// An unknown or missing type counts as a server error.
var streamStatus = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"timeout_error":         http.StatusGatewayTimeout,
	"api_error":             http.StatusInternalServerError,
	"overloaded_error":      529,
}

// classifyAPIError decides whether e is retried and converts it.
func classifyAPIError(e *anthropic.Error, background bool, now time.Time) retry.Failure {
	f := retry.Failure{Err: toAPIError(e, now)}
	if e.Response != nil {
		f.Wait, f.HasWait = retry.RetryAfter(e.Response.Header, now)
	}
	typ := string(e.Type())
	status := e.StatusCode
	if status < 300 {
		var ok bool
		if status, ok = streamStatus[typ]; !ok {
			status = http.StatusInternalServerError
		}
	}
	switch {
	case isSpendLimit(e):
		// Waiting does not lift a spend limit.
	case e.Response != nil && e.Response.Header.Get("x-should-retry") == "false":
		// The server vetoes a retry; it cannot force one (see the package doc).
	case status == 529 || typ == "overloaded_error":
		f.Retryable = !background
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooManyRequests:
		f.Retryable = true
	case status >= 500:
		f.Retryable = true
	}
	return f
}

// isSpendLimit reports a 429 that a wait cannot cure: the organisation has
// hit its spend limit. The SDK exposes it as an error code; older servers say
// it in the type or the message only.
func isSpendLimit(e *anthropic.Error) bool {
	switch e.ErrorCode() {
	case anthropic.ErrorCodeEnforcedSpendLimitReached, anthropic.ErrorCodeContractSpendLimitReached:
		return true
	}
	if e.Type() == "billing_error" {
		return true
	}
	return e.StatusCode == http.StatusTooManyRequests && strings.Contains(strings.ToLower(e.Message), "spend limit")
}

// toAPIError converts an SDK error into the provider-neutral one. A body
// that is not the API's JSON still gives a message: the status text and the
// start of the body.
func toAPIError(e *anthropic.Error, now time.Time) *llm.APIError {
	ae := &llm.APIError{
		StatusCode: e.StatusCode,
		Type:       string(e.Type()),
		Message:    e.Message,
		RequestID:  e.RequestID,
	}
	if e.Response != nil {
		ae.RetryAfter, _ = retry.RetryAfter(e.Response.Header, now)
		if ae.RequestID == "" {
			ae.RequestID = e.Response.Header.Get("request-id")
		}
	}
	if ae.Message == "" {
		ae.Message = fmt.Sprintf("%s; response body: %s", retry.StatusText(e.StatusCode), retry.Snippet([]byte(e.RawJSON()), 300))
	}
	return ae
}
