package fakeapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures a Server. The zero value answers every request "ok".
type Config struct {
	// Policy decides replies. If nil, Script is used; if both are nil every
	// request gets the text "ok".
	Policy Policy
	// Script is a set of scripted turns (LoadScript, ParseScript).
	Script *Script
	// Cache configures the prompt-cache simulator.
	Cache CacheConfig
	// Now is the clock for cache TTLs (default time.Now). It is called from
	// many goroutines and must be safe for concurrent use.
	Now func() time.Time
	// Seed seeds the deterministic fragmentation of deltas and the placement
	// of pings: the same request and seed give the same stream.
	Seed int64
	// Logf, when set, receives one line per request and the HTTP server's
	// own errors. Otherwise the server logs nothing.
	Logf func(format string, args ...any)
	// APIKey, when set, must arrive in x-api-key or as a Bearer token;
	// other requests get 401 authentication_error. When empty any key, or
	// none, is accepted.
	APIKey string
	// RecordLimit bounds Requests to the most recent N requests (0 keeps
	// all). Long-running demos set it; tests usually leave it at 0.
	RecordLimit int
	// Quirks are OpenAI-compatible servers' deviations to reproduce in every
	// OpenAI-protocol stream (quirk.go). New panics and Start fails on an
	// unknown one.
	Quirks []Quirk
	// ContextWindow, when set, is the most input tokens (counted as the
	// cache simulator counts them) a request may have: a larger one gets
	// the API's 400 "prompt is too long". 0 accepts any size.
	ContextWindow int

	// FirstTokenDelay is the first-token latency of every reply that does
	// not set its own Reply.FirstTokenDelay: a model's pace (pace.go). 0
	// answers at once.
	FirstTokenDelay time.Duration
	// OutputTokensPerSecond, when set, streams text, thinking and tool
	// input at this many output tokens a second (tokens counted as bytes/4,
	// as the usage counts them): each delta is released once its bytes
	// could have been generated, so a long tool call streams for seconds
	// and the blocks before it are complete while it does. 0 sends every
	// event at once.
	OutputTokensPerSecond float64
	// Sleep waits for d or until ctx ends, reporting whether d elapsed; the
	// first-token delay and the pacing wait through it (default: a timer).
	// A test injects one, with Now, to run paced streams without waiting.
	// It is called from many goroutines at once.
	Sleep func(ctx context.Context, d time.Duration) bool
	// AwaitPing is how often a stream waiting for a Reply.Await sends a
	// ping (default 5 s).
	AwaitPing time.Duration
}

// Recorded is one request the server received and what it answered.
type Recorded struct {
	Index     int    // arrival order, from 1
	Method    string // HTTP method
	Path      string // URL path
	RequestID string // the request-id header sent back
	// Status is the HTTP status sent: 200 for every stream that started,
	// including those failed later by a StreamError or CutConnection fault;
	// 0 when the client went away before a status was sent.
	Status int
	// Error is the error message sent (in the body or in the stream), "".
	Error string
	// Fault is the injected fault, if any.
	Fault FaultKind
	// Label is the Reply's label (a script's rule name).
	Label string
	// Request is the decoded request, nil when the body did not decode. It
	// is shared with the policy and must not be modified.
	Request *Request
	// Body is the raw request body.
	Body []byte
	// Usage is the usage reported (zero for rejected requests).
	Usage Usage
	// MessageID is the id of the message sent, "" when none was.
	MessageID string
}

// Server is a fake of the Anthropic Messages API on a loopback port. It is
// safe for concurrent use; Close may be called more than once.
type Server struct {
	// URL is the base URL ("http://127.0.0.1:PORT"), without a trailing
	// slash: pass it to the SDK's option.WithBaseURL.
	URL string

	cfg    Config
	policy Policy
	cache  *cache
	memo   *memo // messages and tools decoded before, by their bytes
	hs     *httptest.Server
	cancel context.CancelFunc

	msgSeq atomic.Int64

	mu       sync.Mutex
	reqSeq   int
	records  []*Recorded
	attempts map[[32]byte]int
}

// New starts a server on 127.0.0.1. It panics if it cannot listen, like
// httptest.NewServer; use Start to get an error instead.
func New(cfg Config) *Server {
	s, err := Start(cfg)
	if err != nil {
		panic(err)
	}
	return s
}

// Start starts a server on 127.0.0.1 and returns an error if it cannot
// listen. The caller must Close it.
func Start(cfg Config) (*Server, error) {
	if err := checkQuirks(cfg.Quirks); err != nil {
		return nil, fmt.Errorf("fakeapi: Config.Quirks: %w", err)
	}
	if cfg.FirstTokenDelay < 0 || cfg.OutputTokensPerSecond < 0 {
		return nil, fmt.Errorf("fakeapi: Config.FirstTokenDelay (%s) and OutputTokensPerSecond (%g) must not be negative", cfg.FirstTokenDelay, cfg.OutputTokensPerSecond)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeapi: listen on loopback: %w", err)
	}
	s := newServer(cfg)
	base, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	var errLog *log.Logger
	if cfg.Logf != nil {
		errLog = log.New(logfWriter(cfg.Logf), "fakeapi: ", 0)
	} else {
		errLog = log.New(io.Discard, "", 0)
	}
	s.hs = &httptest.Server{
		Listener: ln,
		Config: &http.Server{
			Handler:           s,
			BaseContext:       func(net.Listener) context.Context { return base },
			ErrorLog:          errLog,
			ReadHeaderTimeout: 30 * time.Second,
		},
	}
	s.hs.Start()
	s.URL = s.hs.URL
	return s, nil
}

func newServer(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = wait
	}
	if cfg.AwaitPing <= 0 {
		cfg.AwaitPing = 5 * time.Second
	}
	s := &Server{cfg: cfg, attempts: map[[32]byte]int{}}
	s.cache = newCache(cfg.Cache, cfg.Now)
	s.memo = newMemo(memoMaxBytes)
	switch {
	case cfg.Policy != nil:
		s.policy = cfg.Policy
	case cfg.Script != nil:
		s.policy = cfg.Script.Policy()
	default:
		s.policy = func(*Request) Reply { return TextReply("ok") }
	}
	return s
}

// Close cancels every in-flight request (a slow first token or a blocked
// policy sees its context end), stops the server and waits for all handlers
// to return.
func (s *Server) Close() {
	s.cancel()
	s.hs.Close()
}

// Requests returns every recorded request in arrival order (see
// Config.RecordLimit). The slice is a copy; the *Request values are shared
// and read-only.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.records))
	for i, r := range s.records {
		out[i] = *r
	}
	return out
}

// CacheStats returns the prompt-cache simulator's counters.
func (s *Server) CacheStats() CacheStats { return s.cache.snapshot() }

// record appends a new record for r and returns it.
func (s *Server) record(r *http.Request) *Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqSeq++ // under the lock, so records stay in index order
	n := s.reqSeq
	rec := &Recorded{Index: n, Method: r.Method, Path: r.URL.Path, RequestID: fmt.Sprintf("req_fake%020d", n)}
	s.records = append(s.records, rec)
	if lim := s.cfg.RecordLimit; lim > 0 && len(s.records) > lim {
		s.records = append(s.records[:0:0], s.records[len(s.records)-lim:]...)
	}
	return rec
}

// update changes a record under the lock Requests takes.
func (s *Server) update(rec *Recorded, f func(*Recorded)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(rec)
}

// attempt counts how often this exact body has been seen.
func (s *Server) attempt(sum [32]byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts[sum]++
	return s.attempts[sum]
}

// maxBody is the API's request size limit.
const maxBody = 32 << 20

// readBody reads a request body into one buffer of its declared length (a
// lead's requests run to megabytes; growing a buffer from 512 bytes copies
// each one about a dozen times). net/http ends the body at that length.
func readBody(r io.Reader, declared int64) ([]byte, error) {
	if declared <= 0 || declared > maxBody {
		return io.ReadAll(r)
	}
	buf := make([]byte, declared)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// ServeHTTP routes a request. Every response carries a request-id header
// (and x-request-id on the OpenAI endpoints).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := s.record(r)
	w.Header().Set("request-id", rec.RequestID)
	api, known := routes[r.URL.Path]
	if known && api != APIMessages {
		w.Header().Set("x-request-id", rec.RequestID)
	}
	switch {
	case !known:
		s.fail(w, rec, &apiError{status: 404, typ: "not_found_error", message: fmt.Sprintf("fakeapi: no route for %s %s (the fake serves POST /v1/messages, /v1/messages/count_tokens, /v1/chat/completions and /v1/responses)", r.Method, r.URL.Path)}, nil)
	case r.Method != http.MethodPost:
		s.fail(w, rec, &apiError{status: 405, typ: "invalid_request_error", message: fmt.Sprintf("fakeapi: %s %s is not allowed; use POST", r.Method, r.URL.Path)}, nil)
	default:
		s.handle(w, r, rec, api)
	}
	s.logRecord(rec)
}

// routes maps each path the fake serves to its protocol.
var routes = map[string]API{
	"/v1/messages":              APIMessages,
	"/v1/messages/count_tokens": APIMessages,
	"/v1/chat/completions":      APIChat,
	"/v1/responses":             APIResponses,
}

// openAIPath reports a path of the OpenAI protocols, whose errors have
// OpenAI's shape.
func openAIPath(path string) bool {
	api, ok := routes[path]
	return ok && api != APIMessages
}

// handle reads, checks and answers a POST to one of the routes.
func (s *Server) handle(w http.ResponseWriter, r *http.Request, rec *Recorded, api API) {
	body, err := readBody(http.MaxBytesReader(w, r.Body, maxBody), r.ContentLength)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.fail(w, rec, &apiError{status: 413, typ: "request_too_large", message: fmt.Sprintf("request body exceeds the %d-byte limit", maxBody)}, nil)
			return
		}
		s.update(rec, func(rc *Recorded) { rc.Error = "reading body: " + err.Error() })
		return
	}
	s.update(rec, func(rc *Recorded) { rc.Body = body })
	if e := s.checkHeaders(r.Header, api); e != nil {
		s.fail(w, rec, e, nil)
		return
	}
	countOnly := r.URL.Path == "/v1/messages/count_tokens"
	var req *Request
	var e *apiError
	switch api {
	case APIChat:
		req, e = decodeChat(body)
	case APIResponses:
		req, e = decodeResponses(body)
	default:
		req, e = decodeRequest(body, countOnly, s.memo)
	}
	if e != nil {
		s.fail(w, rec, e, nil)
		return
	}
	sum := sha256.Sum256(body)
	req.Raw, req.Header, req.Index, req.ctx = body, r.Header.Clone(), rec.Index, r.Context()
	req.Attempt = s.attempt(sum)
	s.update(rec, func(rc *Recorded) { rc.Request = req })
	if countOnly {
		tokens := s.cache.tokens(req)
		s.update(rec, func(rc *Recorded) { rc.Status = 200 })
		writeJSON(w, 200, struct {
			InputTokens int `json:"input_tokens"`
		}{tokens})
		return
	}
	s.respond(r.Context(), w, rec, req, sum)
}

// checkHeaders applies the API's header rules: the OpenAI protocols take
// the key as a bearer token only and need no version header.
func (s *Server) checkHeaders(h http.Header, api API) *apiError {
	if s.cfg.APIKey != "" {
		key := strings.TrimPrefix(h.Get("authorization"), "Bearer ")
		if api == APIMessages && h.Get("x-api-key") != "" {
			key = h.Get("x-api-key")
		}
		if key != s.cfg.APIKey {
			if api != APIMessages {
				return &apiError{status: 401, typ: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided."}
			}
			return &apiError{status: 401, typ: "authentication_error", message: "invalid x-api-key"}
		}
	}
	if api == APIMessages && h.Get("anthropic-version") == "" {
		return invalid("anthropic-version: header is required")
	}
	return nil
}

// fail sends an error response in the API's shape and records it.
func (s *Server) fail(w http.ResponseWriter, rec *Recorded, e *apiError, f *Fault) {
	h := w.Header()
	switch e.status {
	case 408, 409, 429, 500, 502, 503, 504, 529:
		h.Set("x-should-retry", "true")
	}
	if f != nil {
		if f.Kind == SpendLimit {
			h.Set("x-should-retry", "false")
		}
		if f.RetryAfter != "" {
			h.Set("retry-after", f.RetryAfter)
		}
		if f.RetryAfterMs != "" {
			h.Set("retry-after-ms", f.RetryAfterMs)
		}
	}
	s.update(rec, func(rc *Recorded) {
		rc.Status, rc.Error = e.status, e.message
		if f != nil {
			rc.Fault = f.Kind
		}
	})
	switch {
	case f != nil && f.Kind == HTMLError:
		h.Set("content-type", "text/html")
		w.WriteHeader(e.status)
		fmt.Fprintf(w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			e.status, http.StatusText(e.status), e.status, http.StatusText(e.status))
	case openAIPath(rec.Path):
		h.Set("content-type", "application/json")
		w.WriteHeader(e.status)
		w.Write(append(openAIErrorJSON(e), '\n'))
	default:
		writeJSON(w, e.status, wireErrorBody{Type: "error", Error: wireErrObj{e.typ, e.message}, RequestID: rec.RequestID})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := marshalNoEscape(v)
	if err != nil {
		status, data = 500, []byte(`{"type":"error","error":{"type":"api_error","message":"fakeapi: encoding the response failed"}}`)
	}
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

func (s *Server) logRecord(rec *Recorded) {
	if s.cfg.Logf == nil {
		return
	}
	r := s.snapshot(rec)
	line := fmt.Sprintf("#%d %s %s -> %d", r.Index, r.Method, r.Path, r.Status)
	if r.Label != "" {
		line += " rule=" + r.Label
	}
	if r.Fault != "" {
		line += " fault=" + string(r.Fault)
	}
	if r.Error != "" {
		line += " error=" + r.Error
	}
	s.cfg.Logf("fakeapi: %s", line)
}

func (s *Server) snapshot(rec *Recorded) Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *rec
}

// logfWriter adapts Logf to the io.Writer a log.Logger needs.
type logfWriter func(format string, args ...any)

func (f logfWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
