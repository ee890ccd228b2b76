package retry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		f      Failure
		jitter float64
		want   time.Duration
	}{
		{"first retry", 1, Failure{}, 0, 500 * time.Millisecond},
		{"second retry", 2, Failure{}, 0, time.Second},
		{"fourth retry", 4, Failure{}, 0, 4 * time.Second},
		{"sixth retry", 6, Failure{}, 0, 16 * time.Second},
		{"seventh retry hits the cap", 7, Failure{}, 0, 32 * time.Second},
		{"ninth retry stays capped", 9, Failure{}, 0, 32 * time.Second},
		{"huge attempt number", 1000, Failure{}, 0, 32 * time.Second},
		{"full jitter adds a quarter", 1, Failure{}, 0.999999, 500*time.Millisecond + 124999875},
		{"half jitter", 3, Failure{}, 0.5, 2*time.Second + 250*time.Millisecond},
		{"jitter on the cap", 8, Failure{}, 0.5, 36 * time.Second},
		{"jitter out of range is clamped", 1, Failure{}, 7, 625 * time.Millisecond},
		{"negative jitter is zero", 1, Failure{}, -1, 500 * time.Millisecond},
		{"server wait wins", 5, Failure{Wait: 3 * time.Second, HasWait: true}, 0.9, 3 * time.Second},
		{"server zero wait", 5, Failure{HasWait: true}, 0.9, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Backoff(tt.n, tt.f, func() float64 { return tt.jitter })
			if got != tt.want {
				t.Errorf("Backoff(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"retry-after": "7"}, 7 * time.Second, true},
		{"fractional seconds", map[string]string{"retry-after": "1.5"}, 1500 * time.Millisecond, true},
		{"milliseconds win", map[string]string{"retry-after-ms": "250", "retry-after": "9"}, 250 * time.Millisecond, true},
		{"bad ms falls back", map[string]string{"retry-after-ms": "soon", "retry-after": "2"}, 2 * time.Second, true},
		{"capped at a minute", map[string]string{"retry-after": "3600"}, time.Minute, true},
		{"ms capped", map[string]string{"retry-after-ms": "1e300"}, time.Minute, true},
		{"http date", map[string]string{"retry-after": now.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second, true},
		{"http date in the past", map[string]string{"retry-after": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"negative", map[string]string{"retry-after": "-3"}, 0, false},
		{"garbage", map[string]string{"retry-after": "later please"}, 0, false},
		{"NaN", map[string]string{"retry-after": "NaN"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := RetryAfter(h, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("RetryAfter = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestDefaultSleep(t *testing.T) {
	if err := Sleep(t.Context(), 0); err != nil {
		t.Errorf("zero sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled sleep: %v", err)
	}
}

func TestParseMaxTime(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", 0, false}, {"0", 0, false}, {"90", 90 * time.Second, false}, {"1.5", 1500 * time.Millisecond, false},
		{"2m", 2 * time.Minute, false}, {" 30s ", 30 * time.Second, false},
		{"soon", 0, true}, {"-5", 0, true}, {"-1m", 0, true},
	} {
		got, err := ParseMaxTime(tt.in)
		if got != tt.want || (err != nil) != tt.bad {
			t.Errorf("ParseMaxTime(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}
