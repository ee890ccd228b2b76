package claude

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
)

// sdkError builds the SDK's error as the SDK would for status and body.
func sdkError(t *testing.T, status int, body string, header map[string]string) *anthropic.Error {
	t.Helper()
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	e := &anthropic.Error{StatusCode: status, Response: &http.Response{StatusCode: status, Header: h}, RequestID: h.Get("request-id")}
	if err := e.UnmarshalJSON([]byte(body)); err != nil {
		t.Fatal(err)
	}
	return e
}

func errBody(typ, msg string) string {
	return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`
}

func TestClassifyAPIError(t *testing.T) {
	now := time.Now()
	spendCode := `{"type":"error","error":{"type":"rate_limit_error","message":"limit","details":{"error_code":"enforced_spend_limit_reached"}}}`
	tests := []struct {
		name       string
		status     int
		body       string
		header     map[string]string
		background bool
		retryable  bool
		wait       time.Duration
	}{
		{"400", 400, errBody("invalid_request_error", "bad"), nil, false, false, 0},
		{"401", 401, errBody("authentication_error", "who"), nil, false, false, 0},
		{"403", 403, errBody("permission_error", "no"), nil, false, false, 0},
		{"404", 404, errBody("not_found_error", "gone"), nil, false, false, 0},
		{"413", 413, errBody("request_too_large", "big"), nil, false, false, 0},
		{"408", 408, errBody("timeout_error", "slow"), nil, false, true, 0},
		{"409", 409, errBody("conflict_error", "again"), nil, false, true, 0},
		{"429 with retry-after", 429, errBody("rate_limit_error", "slow down"), map[string]string{"retry-after": "4"}, false, true, 4 * time.Second},
		{"429 spend limit by code", 429, spendCode, map[string]string{"retry-after": "4"}, false, false, 4 * time.Second},
		{"429 spend limit by message", 429, errBody("rate_limit_error", "You have reached your spend limit."), nil, false, false, 0},
		{"500", 500, errBody("api_error", "oops"), nil, false, true, 0},
		{"500 vetoed by x-should-retry", 500, errBody("api_error", "oops"), map[string]string{"x-should-retry": "false"}, false, false, 0},
		{"400 not forced by x-should-retry", 400, errBody("invalid_request_error", "x"), map[string]string{"x-should-retry": "true"}, false, false, 0},
		{"502 html", 502, "<html>bad gateway</html>", nil, false, true, 0},
		{"529", 529, errBody("overloaded_error", "busy"), nil, false, true, 0},
		{"529 in the background", 529, errBody("overloaded_error", "busy"), nil, true, false, 0},
		{"500 in the background", 500, errBody("api_error", "oops"), nil, true, true, 0},
		{"stream overloaded", 200, errBody("overloaded_error", "busy"), nil, false, true, 0},
		{"stream overloaded in the background", 200, errBody("overloaded_error", "busy"), nil, true, false, 0},
		{"stream api error", 200, errBody("api_error", "x"), nil, false, true, 0},
		{"stream unknown type", 200, errBody("brand_new_error", "x"), nil, false, true, 0},
		{"stream not json", 200, "garbage", nil, false, true, 0},
		{"stream invalid request", 200, errBody("invalid_request_error", "x"), nil, false, false, 0},
		{"stream rate limit", 200, errBody("rate_limit_error", "x"), nil, false, true, 0},
		{"402 billing", 402, errBody("billing_error", "pay"), nil, false, false, 0},
		{"418", 418, errBody("teapot", "x"), nil, false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := classifyAPIError(sdkError(t, tt.status, tt.body, tt.header), tt.background, now)
			if f.Retryable != tt.retryable || f.Wait != tt.wait {
				t.Errorf("retryable %v wait %v; want %v %v (%v)", f.Retryable, f.Wait, tt.retryable, tt.wait, f.Err)
			}
			var ae *llm.APIError
			if !errors.As(f.Err, &ae) || ae.StatusCode != tt.status || ae.Message == "" {
				t.Errorf("error %#v does not carry status %d and a message", f.Err, tt.status)
			}
		})
	}
}

func TestToAPIError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		header map[string]string
		want   llm.APIError
	}{
		{"json", 429, errBody("rate_limit_error", "Too many"), map[string]string{"request-id": "req_1", "retry-after": "3"},
			llm.APIError{StatusCode: 429, Type: "rate_limit_error", Message: "Too many", RequestID: "req_1", RetryAfter: 3 * time.Second}},
		{"html", 502, "<html>\n<body>Bad   gateway</body></html>", map[string]string{"request-id": "req_2"},
			llm.APIError{StatusCode: 502, Message: "Bad Gateway; response body: <html> <body>Bad gateway</body></html>", RequestID: "req_2"}},
		{"empty", 503, "", nil, llm.APIError{StatusCode: 503, Message: "Service Unavailable; response body: (empty)"}},
		{"529 text", 529, "overloaded", nil, llm.APIError{StatusCode: 529, Message: "Overloaded; response body: overloaded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toAPIError(sdkError(t, tt.status, tt.body, tt.header), time.Now())
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	long := toAPIError(sdkError(t, 500, strings.Repeat("x", 5000), nil), time.Now())
	if len(long.Message) > 400 {
		t.Errorf("message not cut short: %d bytes", len(long.Message))
	}
}
