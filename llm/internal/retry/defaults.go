package retry

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// MaxIdleConnsPerHost is how many idle connections to a server the shared
// transport keeps: enough for one per agent at the default agent limits
// (http.DefaultTransport keeps 2, and hundreds of agents streaming at once
// would dial a new connection for most requests to an HTTP/1.1 server).
const MaxIdleConnsPerHost = 256

// sharedTransport is the transport of the Models given no HTTP client.
var sharedTransport = sync.OnceValue(func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = max(t.MaxIdleConns, MaxIdleConnsPerHost)
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	return t
})

// Settings are the knobs of the retry policy and the connection that every
// provider's Config has, with the same meaning.
type Settings struct {
	MaxAttempts int
	IdleTimeout time.Duration
	Sleep       func(ctx context.Context, d time.Duration) error
	Rand        func() float64
	Now         func() time.Time
	HTTPClient  *http.Client
	// MaxRetryTime caps the time spent retrying one request (0: none;
	// negative is an error).
	MaxRetryTime time.Duration
}

// Defaults are the values of zero Settings fields.
const (
	DefaultMaxAttempts = 10
	DefaultIdleTimeout = 90 * time.Second
)

// Fill returns s with its zero fields set to the defaults: 10 attempts, a
// 90 s watchdog, a timer sleep, math/rand/v2, time.Now and a client on the
// shared transport. name prefixes the error for a negative MaxAttempts.
func (s Settings) Fill(name string) (Settings, error) {
	if s.MaxAttempts < 0 {
		return s, fmt.Errorf("%s: MaxAttempts is %d; use a positive number (0 means %d)", name, s.MaxAttempts, DefaultMaxAttempts)
	}
	if s.MaxRetryTime < 0 {
		return s, fmt.Errorf("%s: MaxRetryTime is %s; use 0 for no cap or a positive duration", name, s.MaxRetryTime)
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.IdleTimeout == 0 {
		s.IdleTimeout = DefaultIdleTimeout
	}
	if s.Sleep == nil {
		s.Sleep = Sleep
	}
	if s.Rand == nil {
		s.Rand = rand.Float64
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.HTTPClient == nil {
		s.HTTPClient = &http.Client{Transport: sharedTransport()}
	}
	return s, nil
}

// Stream is a provider's llm.Model.Stream: it encodes the request once, then
// runs attempts of it under p. encode's error ends the sequence at once.
func (p Policy) Stream(ctx context.Context, encode func() ([]byte, error),
	attempt func(body []byte, yield func(llm.Event, error) bool) (Failure, bool)) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := encode()
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		p.Run(ctx, func(yield func(llm.Event, error) bool) (Failure, bool) { return attempt(body, yield) }, yield)
	}
}
