package llm

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"
)

func TestRetryInfoSaysWhatFailedWhereAndWhatComesNext(t *testing.T) {
	refused := fmt.Errorf("claude: connection to the API failed: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	for _, tt := range []struct {
		r    RetryInfo
		want string
	}{
		{RetryInfo{Attempt: 3, MaxAttempts: 10, Wait: 4200 * time.Millisecond, Err: refused, URL: "http://127.0.0.1:9"},
			"API unreachable at http://127.0.0.1:9 (connection refused); retry 3/10 in 4 s"},
		{RetryInfo{Attempt: 2, MaxAttempts: 10, Wait: 500 * time.Millisecond, Err: errors.New("busy"), URL: "https://api.anthropic.com", Status: 529},
			"API error at https://api.anthropic.com (529 Overloaded); retry 2/10 in 0.5 s"},
		{RetryInfo{Attempt: 4, MaxAttempts: 5, Wait: 65 * time.Second, Err: fmt.Errorf("x: %w", errors.New("stream cut")), URL: "http://h", Status: 200},
			"API response from http://h failed (stream cut); retry 4/5 in 1 min 5 s"},
		{RetryInfo{Attempt: 2, MaxAttempts: 3, Wait: time.Second, Err: &net.DNSError{Name: "nohost.example", IsNotFound: true}},
			"API unreachable at the API (no such host nohost.example); retry 2/3 in 1 s"},
	} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}
