package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// Replay is an http.RoundTripper that answers every request with one
// recorded response. It is safe for concurrent use; its fields must not
// change once it is in use.
type Replay struct {
	Status int
	Header http.Header
	Body   []byte

	requests  atomic.Int64
	lastBytes atomic.Int64
}

// RoundTrip drains and closes the request body, then returns the recorded
// response with a fresh body reader.
func (r *Replay) RoundTrip(req *http.Request) (*http.Response, error) {
	var n int64
	if req.Body != nil {
		var err error
		n, err = io.Copy(io.Discard, req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("bench: replay: reading the request body: %w", err)
		}
	}
	r.requests.Add(1)
	r.lastBytes.Store(n)
	return &http.Response{
		Status: fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status)), StatusCode: r.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: r.Header.Clone(), Body: io.NopCloser(bytes.NewReader(r.Body)),
		ContentLength: -1, Request: req,
	}, nil
}

// Requests returns how many requests the replay has answered.
func (r *Replay) Requests() int64 { return r.requests.Load() }

// LastRequestBytes returns the body size of the last request.
func (r *Replay) LastRequestBytes() int64 { return r.lastBytes.Load() }

// Recorder is an http.RoundTripper that passes requests to Next and keeps
// a copy of the last response. Safe for concurrent use.
type Recorder struct {
	Next http.RoundTripper

	mu   sync.Mutex
	last *Replay
}

// RoundTrip forwards req and records the response, whose body it reads in
// full before returning it.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.Next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("bench: recorder: reading the response: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.last = &Replay{Status: resp.StatusCode, Header: resp.Header.Clone(), Body: body}
	r.mu.Unlock()
	return resp, nil
}

// Last returns a Replay of the last response, or an error if there was
// none.
func (r *Recorder) Last() (*Replay, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil, errors.New("bench: recorder: no response was recorded")
	}
	return &Replay{Status: r.last.Status, Header: r.last.Header, Body: r.last.Body}, nil
}
