// Package web holds the web tools. WebFetch fetches a URL, turns the page
// into readable text and returns it with the model's question. WebSearch
// searches the web through the provider's server-side search (the
// Anthropic API's web_search tool), as Claude Code does: each call is one
// request, with the query as its prompt, to a model that has the search
// tool, and the hits and the model's summary come back.
//
// Decisions the spec leaves open:
//
//   - WebSearch exists only where the provider has server-side search
//     (tool/builtin adds it when given a SearchConfig.Model). It asks for
//     approval by default (package permission), like WebFetch: the query
//     leaves the machine. A search turn that pauses (pause_turn) is
//     resumed at most three times; failed searches are reported in the
//     result, not as a tool error.
//   - Only http and https URLs without credentials are fetched. http is
//     upgraded to https, except for loopback hosts (localhost, 127.0.0.0/8,
//     ::1), which usually serve plain http in development and tests.
//   - Redirects are followed, at most ten, only when they stay on the same
//     host (ignoring a "www." prefix), port and scheme (or upgrade http to
//     https), and the permission rules allow the new URL without asking
//     (Config.Allowed: a rule for example.com does not cover
//     www.example.com). A redirect elsewhere is not followed: the result
//     tells the model where it leads so it can decide to fetch that URL
//     itself, as in Claude Code, which goes through the permission check.
//   - Loopback, private, link-local (cloud metadata at 169.254.169.254) and
//     other non-public addresses are refused unless a rule names the host
//     (Config.NamedHost), in every permission mode. The check is on the
//     address actually dialled: WebFetch resolves the name, checks each
//     address and connects to that address, so DNS rebinding cannot get
//     past it. Through a proxy from the environment the target's addresses
//     are checked before the request.
//   - One fetch takes at most 30 s and reads at most 10 MB; the text given to
//     the model is cut to 100,000 characters, with a note. HTML is converted
//     by a small converter of our own (see htmlText); text, JSON, XML and
//     similar types pass through; images, PDFs and other binary types are
//     refused with a message. Bodies that are not UTF-8 are read as Latin-1.
//   - Without Config.Summarize the page text and the prompt go back to the
//     calling model, which answers from them. With it, the page and prompt
//     go through that function (a small, fast model) and its answer is
//     returned; if it fails, the page text is returned instead, with a note.
//   - The default client keeps no idle connections, so no goroutine outlives
//     a call.
package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// SummarizeFunc answers prompt from a page's content.
type SummarizeFunc func(ctx context.Context, content, prompt string) (string, error)

// Config configures WebFetch. Zero values take the defaults.
type Config struct {
	// TLS configures https connections (nil: the system's roots).
	TLS *tls.Config
	// Timeout bounds one fetch, redirects included (30 s).
	Timeout time.Duration
	// MaxBytes bounds the body read (10 MB).
	MaxBytes int64
	// MaxChars bounds the text handed on (100,000 characters).
	MaxChars int
	// Summarize, if set, answers the prompt from the page.
	Summarize SummarizeFunc
	// UserAgent is sent with every request.
	UserAgent string
	// Allowed reports whether the permission rules let u be fetched
	// without asking. The first URL has passed the permission check; every
	// redirect hop must pass Allowed too, or it is not followed. nil
	// follows every same-host redirect.
	Allowed func(ctx context.Context, u *url.URL) bool
	// NamedHost reports whether a rule names host explicitly
	// (WebFetch(domain:localhost)); only such a host may be reached at a
	// loopback, private or link-local address. nil names none.
	NamedHost func(host string) bool
	// Resolve looks host names up (net.DefaultResolver). The addresses it
	// returns are checked, then dialled as they are.
	Resolve func(ctx context.Context, host string) ([]net.IP, error)
}

// fetcher is WebFetch's state: its settings and HTTP client.
type fetcher struct {
	cfg     Config
	client  *http.Client
	proxy   func(*http.Request) (*url.URL, error)
	proxies map[string]bool // host:port of the environment's proxies
}

// New returns the WebFetch tool. A fetch reaches outside the agent, so its
// calls are not read-only (for approval), but they may run in parallel.
// Safe for concurrent use.
func New(cfg Config) tool.Tool {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 10 << 20
	}
	if cfg.MaxChars <= 0 {
		cfg.MaxChars = 100_000
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "Cohort-WebFetch/1.0"
	}
	w := &fetcher{cfg: cfg, proxy: http.ProxyFromEnvironment}
	w.proxies = proxyAddrs(w.proxy)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DisableKeepAlives = true
	transport.DialContext = w.dial
	transport.Proxy = w.proxy
	if cfg.TLS != nil {
		transport.TLSClientConfig = cfg.TLS.Clone()
	}
	// Redirects are followed by hand, to check each hop.
	w.client = &http.Client{Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return tool.New(tool.Spec[fetchInput]{Name: "WebFetch", Description: description, Input: schema,
		Traits: tool.Traits{ConcurrencySafe: true}, Run: w.run})
}

const description = `Fetches a web page and answers a question about it.

- Give the full URL (http:// is upgraded to https://) and a prompt saying what you want from the page.
- HTML is converted to readable text (headings, paragraphs, lists and links kept); plain text and JSON are returned as they are. Images, PDFs and other binary content cannot be fetched.
- Very long pages are cut off.
- If the URL redirects to a different host, the redirect is not followed: you are told where it leads, and can fetch that URL with a new call.
- This tool only reads; it cannot log in, fill in forms or reach pages that need authentication. Prefer a more specific tool for sites that have one (for example an MCP server).`

var schema = tool.Object(
	tool.Required("url", tool.String("The URL to fetch.").WithMinLength(1).WithMaxLength(2000)),
	tool.Required("prompt", tool.String("What to find out from the page.")),
)

// Page is the Meta of a successful fetch.
type Page struct {
	URL         string // after redirects
	Status      int
	ContentType string
	Bytes       int
	Truncated   bool
}

type fetchInput struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
}

// FetchResponse is the structured result of a WebFetch call
// (tool.Result.Response), in Claude Code's shape: the page's size and HTTP
// status, what the call returned, how long it took and the URL fetched.
type FetchResponse struct {
	Bytes      int    `json:"bytes"`
	Code       int    `json:"code"`
	CodeText   string `json:"codeText"`
	Result     string `json:"result"`
	DurationMs int64  `json:"durationMs"`
	URL        string `json:"url"`
}

func (w *fetcher) run(ctx context.Context, _ *tool.Env, in fetchInput) (tool.Result, error) {
	start := time.Now()
	res, err := w.fetchPage(ctx, in.URL, in.Prompt)
	if page, ok := res.Meta.(Page); ok && err == nil {
		res.Response = &FetchResponse{Bytes: page.Bytes, Code: page.Status, CodeText: http.StatusText(page.Status),
			Result: res.TextOf(), DurationMs: time.Since(start).Milliseconds(), URL: page.URL}
	}
	return res, err
}

func (w *fetcher) fetchPage(ctx context.Context, rawURL, prompt string) (tool.Result, error) {
	u, err := checkURL(rawURL)
	if err != nil {
		return tool.Result{}, err
	}
	fetchCtx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	page, body, redirect, err := w.fetch(fetchCtx, u)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return tool.Result{}, tool.Failf("fetching %s timed out after %s", u, w.cfg.Timeout)
		}
		return tool.Result{}, err
	}
	if redirect != "" {
		return tool.Text(fmt.Sprintf("%s redirects to a different host: %s\nThe redirect was not followed. To fetch that page, call WebFetch again with url %q and the same prompt.", page.URL, redirect, redirect)), nil
	}
	text, truncated := cut(body, w.cfg.MaxChars)
	page.Truncated = page.Truncated || truncated
	header := fmt.Sprintf("Content of %s (%s, %d bytes)", page.URL, page.ContentType, page.Bytes)
	if page.Truncated {
		header += "; cut off, the page is longer"
	}
	if w.cfg.Summarize != nil {
		answer, err := w.cfg.Summarize(ctx, text, prompt)
		if err == nil {
			return tool.Result{Content: []llm.Block{llm.Text(fmt.Sprintf("From %s:\n\n%s", page.URL, answer))}, Meta: page}, nil
		}
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		header += fmt.Sprintf(" (summarising failed: %v; the page text follows)", err)
	}
	out := fmt.Sprintf("%s:\n\n%s\n\n---\nUsing the page content above, respond to this request: %s", header, text, prompt)
	return tool.Result{Content: []llm.Block{llm.Text(out)}, Meta: page}, nil
}

// checkURL parses and vets the URL, upgrading http for remote hosts.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, tool.Failf("invalid URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, tool.Failf("invalid URL %q: only http and https URLs can be fetched", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, tool.Failf("invalid URL %q: no host", raw)
	}
	if u.User != nil {
		return nil, tool.Failf("invalid URL %q: URLs with user names or passwords are not fetched", raw)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		u.Scheme = "https"
	}
	u.Fragment = ""
	return u, nil
}

func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// permittedRedirect reports whether a redirect from a to b stays on the
// same site.
func permittedRedirect(a, b *url.URL) bool {
	sameScheme := a.Scheme == b.Scheme || (a.Scheme == "http" && b.Scheme == "https")
	strip := func(h string) string { return strings.TrimPrefix(strings.ToLower(h), "www.") }
	return sameScheme && b.User == nil && strip(a.Hostname()) == strip(b.Hostname()) &&
		(a.Port() == b.Port() || port(a) == port(b)) // default ports count as the same across an upgrade
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}

const maxRedirects = 10

// fetch GETs u, following permitted redirects. redirect is set instead of
// a body when the page leads elsewhere.
func (w *fetcher) fetch(ctx context.Context, u *url.URL) (page Page, body, redirect string, err error) {
	for hop := 0; ; hop++ {
		page.URL = u.String()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return page, "", "", tool.Failf("invalid URL %s: %v", u, err)
		}
		req.Header.Set("User-Agent", w.cfg.UserAgent)
		req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5")
		if err := w.checkViaProxy(ctx, req); err != nil {
			return page, "", "", tool.Failf("%v", err)
		}
		resp, err := w.client.Do(req)
		var ae *addressError
		if errors.As(err, &ae) {
			return page, "", "", tool.Failf("%v", ae)
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				return page, "", "", context.DeadlineExceeded
			}
			return page, "", "", tool.Failf("fetching %s failed: %v", u, err)
		}
		page.Status = resp.StatusCode
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
			resp.Body.Close()
			next, err := u.Parse(resp.Header.Get("Location"))
			if err != nil {
				return page, "", "", tool.Failf("%s redirects to an invalid location %q", u, resp.Header.Get("Location"))
			}
			if !permittedRedirect(u, next) || (w.cfg.Allowed != nil && !w.cfg.Allowed(ctx, next)) {
				return page, "", next.String(), nil
			}
			if hop == maxRedirects {
				return page, "", "", tool.Failf("%s redirected more than %d times", page.URL, maxRedirects)
			}
			u = next
			continue
		}
		final, text, err := w.read(resp, page)
		return final, text, "", err
	}
}

// read turns a final response into text.
func (w *fetcher) read(resp *http.Response, page Page) (Page, string, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, w.cfg.MaxBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return page, "", err
		}
		return page, "", tool.Failf("reading %s failed: %v", page.URL, err)
	}
	if int64(len(data)) > w.cfg.MaxBytes {
		data, page.Truncated = data[:w.cfg.MaxBytes], true
	}
	page.Bytes = len(data)
	if resp.StatusCode >= 400 {
		snippet, _ := cut(strings.TrimSpace(string(data)), 500)
		return page, "", tool.Failf("%s returned HTTP %s\n%s", page.URL, resp.Status, snippet)
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(data)
	}
	mediaType, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mediaType = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	page.ContentType = mediaType
	if !isText(mediaType) {
		return page, "", tool.Failf("%s is %s, not a text page; WebFetch only reads HTML and text", page.URL, ct)
	}
	text := decodeText(data)
	if mediaType == "text/html" || mediaType == "application/xhtml+xml" {
		base, _ := url.Parse(page.URL)
		text = htmlText(text, base)
	}
	return page, text, nil
}

func isText(mediaType string) bool {
	switch {
	case strings.HasPrefix(mediaType, "text/"):
		return true
	case strings.HasSuffix(mediaType, "+json"), strings.HasSuffix(mediaType, "+xml"):
		return true
	}
	switch mediaType {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript",
		"application/ecmascript", "application/x-yaml", "application/yaml", "application/toml", "application/x-sh":
		return true
	}
	return false
}

// decodeText returns data as UTF-8, reading it as Latin-1 when it is not
// valid UTF-8 (old pages; other legacy charsets come out approximately).
func decodeText(data []byte) string {
	if utf8.Valid(data) {
		return string(data)
	}
	r := make([]rune, len(data))
	for i, b := range data {
		r[i] = rune(b)
	}
	return string(r)
}

// cut shortens s to max characters.
func cut(s string, max int) (string, bool) {
	if utf8.RuneCountInString(s) <= max {
		return s, false
	}
	return string([]rune(s)[:max]), true
}
