// Package retry is the retry policy and attempt watchdog the model providers
// (llm/claude, llm/openai) share, so that every provider retries the same
// failures with the same waits:
//
//   - Policy.Run sends a request up to MaxAttempts times (and within MaxTime
//     when set), yielding llm.EventRetry (attempt, most attempts, wait,
//     error, URL, status) before each wait, so a front end reports every
//     retry as it happens; with FailFast, a refused connection on the first
//     attempt is final.
//   - Backoff is the server's retry-after-ms or retry-after when it gave one
//     (capped at 60 s), else 0.5 s·2^(n-1) capped at 32 s plus up to 25 %
//     jitter.
//   - Watch observes one attempt at the HTTP level through an SDK
//     middleware (both SDKs take the same function shape): whether the
//     request went out, transport errors, a 2xx answer that is not an event
//     stream, the start of an error body, and an idle watchdog that cancels
//     the attempt when nothing arrives for too long.
//
// Which failures are retryable is each provider's decision (its API names
// its errors differently); the package only carries the verdict.
package retry

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// Backoff bounds.
const (
	maxServerWait = 60 * time.Second
	baseDelay     = 500 * time.Millisecond
	maxDelay      = 32 * time.Second
	jitterShare   = 0.25
)

// Failure is the outcome of a failed attempt.
type Failure struct {
	Err       error
	Retryable bool
	// Wait is the server's requested wait, valid when HasWait.
	Wait    time.Duration
	HasWait bool
	// Status is the HTTP status of the answer, 0 when none came.
	Status int
	// Refused: the connection was refused (nothing listens at the URL).
	Refused bool
}

// Policy is what the retry loop needs from a provider's configuration. Sleep,
// Rand and Logf are called from every concurrent stream and must be safe for
// concurrent use.
type Policy struct {
	// Name prefixes errors and log lines ("claude", "openai").
	Name string
	// MaxAttempts bounds the attempts, the first included.
	MaxAttempts int
	// Sleep waits between attempts and returns early with ctx's error.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for the jitter.
	Rand func() float64
	// Logf, when set, receives one line per retry.
	Logf func(format string, args ...any)
	// URL is the API's base URL, for the retry events and errors.
	URL string
	// FailFast makes a refused connection on a request's first attempt
	// final: the provider sets it while nothing has ever answered at a
	// base URL the user chose (a typo, or a local server not started),
	// where ten attempts would only add two minutes of silence.
	FailFast bool
	// MaxTime caps the time spent on one request's retries, from the start
	// of its first attempt: a retry whose wait would end past it is not
	// made (0: no cap beyond MaxAttempts). Now reads the clock (default
	// time.Now).
	MaxTime time.Duration
	Now     func() time.Time
}

// Attempt sends the request once and yields its events. done reports that
// the sequence is over: the response was delivered or the consumer stopped.
// Otherwise f says why the attempt failed.
type Attempt func(yield func(llm.Event, error) bool) (f Failure, done bool)

// Run calls attempt until one delivers, the failure is not retryable, the
// attempts are used up, the retry time cap is reached or ctx ends, and
// yields the final error, if any. Each retry is yielded as llm.EventRetry
// before its wait, as it happens. The sequence it feeds ends after
// llm.EventDone or with one error.
func (p Policy) Run(ctx context.Context, attempt Attempt, yield func(llm.Event, error) bool) {
	now := p.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	for n := 1; ; n++ {
		f, done := attempt(yield)
		if done {
			return
		}
		if ctx.Err() != nil {
			yield(llm.Event{}, fmt.Errorf("%s: %w", p.Name, context.Cause(ctx)))
			return
		}
		if !f.Retryable {
			yield(llm.Event{}, f.Err)
			return
		}
		if n == 1 && f.Refused && p.FailFast {
			yield(llm.Event{}, fmt.Errorf("%s: nothing listens at %s (connection refused); check the base URL, or start the server (not retried): %w", p.Name, p.URL, f.Err))
			return
		}
		if n >= p.MaxAttempts {
			yield(llm.Event{}, fmt.Errorf("%s: giving up after %d attempts: %w", p.Name, n, f.Err))
			return
		}
		wait := Backoff(n, f, p.Rand)
		if spent := now().Sub(start); p.MaxTime > 0 && spent+wait > p.MaxTime {
			yield(llm.Event{}, fmt.Errorf("%s: giving up after %d attempts in %s (the retry time is capped at %s): %w", p.Name, n, spent.Round(time.Millisecond), p.MaxTime, f.Err))
			return
		}
		if p.Logf != nil {
			p.Logf("%s: attempt %d of %d failed, retrying in %s: %v", p.Name, n, p.MaxAttempts, wait, f.Err)
		}
		retry := &llm.RetryInfo{Attempt: n + 1, MaxAttempts: p.MaxAttempts, Wait: wait, Err: f.Err, URL: p.URL, Status: f.Status}
		if !yield(llm.Event{Type: llm.EventRetry, Retry: retry}, nil) {
			return
		}
		if err := p.Sleep(ctx, wait); err != nil {
			yield(llm.Event{}, fmt.Errorf("%s: waiting to retry: %w", p.Name, err))
			return
		}
	}
}

// ParseMaxTime reads a retry time cap as COHORT_API_RETRY_MAX gives it: a
// Go duration ("90s", "2m") or a number of seconds ("90"); "" and "0" mean
// no cap.
func ParseMaxTime(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && !math.IsInf(s, 0) {
		return time.Duration(s * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("COHORT_API_RETRY_MAX=%q is not a duration; give seconds (90) or a Go duration (90s, 2m), 0 for no cap", v)
	}
	return d, nil
}

// RetryAfter reads the server's requested wait: retry-after-ms (milliseconds)
// first, then retry-after (seconds or an HTTP date). Values above 60 s are
// capped there; unreadable values count as absent.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
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

// Backoff is the wait before the attempt after failed attempt n (from 1):
// the server's wait when it gave one, else 0.5 s·2^(n-1) capped at 32 s plus
// up to 25 % jitter drawn from rnd.
func Backoff(n int, f Failure, rnd func() float64) time.Duration {
	if f.HasWait {
		return f.Wait
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

// Sleep waits for d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// StatusText is the reason phrase of an HTTP status, 529 included.
func StatusText(code int) string {
	if code == 529 {
		return "Overloaded"
	}
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "HTTP " + strconv.Itoa(code)
}

// Snippet returns the start of body on one line, for an error message:
// whitespace runs become one space, at most n bytes (cut at a character),
// "(empty)" for nothing.
func Snippet(body []byte, n int) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	if s == "" {
		s = "(empty)"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
