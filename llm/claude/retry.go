package claude

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cohort-dev/cohort/llm"
)

// Backoff bounds.
const (
	maxServerWait = 60 * time.Second
	baseDelay     = 500 * time.Millisecond
	maxDelay      = 32 * time.Second
	jitterShare   = 0.25
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

// failure is the outcome of a failed attempt.
type failure struct {
	err       error
	retryable bool
	// wait is the server's requested wait, valid when hasWait.
	wait    time.Duration
	hasWait bool
}

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
func classifyAPIError(e *anthropic.Error, background bool, now time.Time) failure {
	f := failure{err: toAPIError(e, now)}
	if e.Response != nil {
		f.wait, f.hasWait = retryAfter(e.Response.Header, now)
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
		f.retryable = !background
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooManyRequests:
		f.retryable = true
	case status >= 500:
		f.retryable = true
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
		ae.RetryAfter, _ = retryAfter(e.Response.Header, now)
		if ae.RequestID == "" {
			ae.RequestID = e.Response.Header.Get("request-id")
		}
	}
	if ae.Message == "" {
		snippet := strings.Join(strings.Fields(e.RawJSON()), " ")
		if len(snippet) > 300 {
			snippet = snippet[:300] + "…"
		}
		if snippet == "" {
			snippet = "(empty)"
		}
		ae.Message = fmt.Sprintf("%s; response body: %s", statusText(e.StatusCode), snippet)
	}
	return ae
}

func statusText(code int) string {
	if code == 529 {
		return "Overloaded"
	}
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "HTTP " + strconv.Itoa(code)
}

// retryAfter reads the server's requested wait: retry-after-ms (milliseconds)
// first, then retry-after (seconds or an HTTP date). Values above 60 s are
// capped there; unreadable values count as absent.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	capped := func(seconds float64) (time.Duration, bool) {
		if math.IsNaN(seconds) || seconds < 0 {
			return 0, false
		}
		return min(time.Duration(min(seconds, maxServerWait.Seconds())*float64(time.Second)), maxServerWait), true
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			if d, ok := capped(ms / 1000); ok {
				return d, true
			}
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return capped(s)
	}
	if t, err := http.ParseTime(v); err == nil {
		return capped(max(t.Sub(now).Seconds(), 0))
	}
	return 0, false
}

// backoff is the wait before the attempt after failed attempt n (from 1):
// the server's wait when it gave one, else 0.5 s·2^(n-1) capped at 32 s plus
// up to 25 % jitter drawn from rnd.
func backoff(n int, f failure, rnd func() float64) time.Duration {
	if f.hasWait {
		return f.wait
	}
	d := maxDelay
	if n >= 1 && n <= 7 {
		d = min(baseDelay<<(n-1), maxDelay)
	}
	r := rnd()
	if math.IsNaN(r) || r < 0 {
		r = 0
	}
	r = min(r, 1)
	return d + time.Duration(r*jitterShare*float64(d))
}
