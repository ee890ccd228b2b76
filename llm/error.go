package llm

import (
	"fmt"
	"time"
)

// APIError is an error the model provider reported. Providers return it
// (wrapped or not) so that callers can branch without knowing the provider.
type APIError struct {
	StatusCode int    // HTTP status; 200 for an error event inside a stream
	Type       string // the API's error type ("overloaded_error")
	Message    string
	RequestID  string
	// RetryAfter is the server's requested wait, zero when it gave none.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("model API error %d: %s", e.StatusCode, e.Message)
	if e.Type != "" {
		s = fmt.Sprintf("model API error %d %s: %s", e.StatusCode, e.Type, e.Message)
	}
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}
