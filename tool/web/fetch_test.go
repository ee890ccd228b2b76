package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// site serves the pages the tests fetch.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Docs</title><script>alert(1)</script></head>
<body><h1>Install</h1><p>Run <code>make</code>, then read <a href="/guide">the guide</a>.</p></body></html>`)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "just text\n<not html>")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("abcdefghij", 100))
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing here", http.StatusNotFound)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		// Same server, different host name: a cross-host redirect.
		_, port, _ := net.SplitHostPort(r.Host)
		http.Redirect(w, r, "http://localhost:"+port+"/plain", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/ua", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, r.UserAgent())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func fetch(t *testing.T, w tool.Tool, ctx context.Context, u, prompt string) (tool.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"url": u, "prompt": prompt})
	if err := tool.ValidateInput(w.Def().InputSchema, raw); err != nil {
		t.Fatalf("input does not match the schema: %v", err)
	}
	return w.Run(ctx, nil, raw)
}

func TestWebFetch(t *testing.T) {
	srv := site(t)
	tests := []struct {
		name    string
		cfg     Config
		path    string
		want    string
		isError bool
	}{
		{name: "html converted", path: "/page", want: "Content of SRV/page (text/html, 171 bytes):\n\n" +
			"Title: Docs\n\n# Install\n\nRun `make`, then read [the guide](SRV/guide).\n\n---\n" +
			"Using the page content above, respond to this request: PROMPT"},
		{name: "plain text kept", path: "/plain", want: "Content of SRV/plain (text/plain, 20 bytes):\n\njust text\n<not html>\n\n---\nUsing the page content above, respond to this request: PROMPT"},
		{name: "json", path: "/json", want: "Content of SRV/json (application/json, 11 bytes):\n\n{\"ok\":true}\n\n---\nUsing the page content above, respond to this request: PROMPT"},
		{name: "latin1", path: "/latin1", want: "Content of SRV/latin1 (text/plain, 4 bytes):\n\ncafé\n\n---\nUsing the page content above, respond to this request: PROMPT"},
		{name: "same-host redirect followed", path: "/moved", want: "Content of SRV/plain (text/plain, 20 bytes):\n\njust text\n<not html>\n\n---\nUsing the page content above, respond to this request: PROMPT"},
		{name: "user agent", cfg: Config{UserAgent: "test-agent/1"}, path: "/ua", want: "Content of SRV/ua (text/plain, 12 bytes):\n\ntest-agent/1\n\n---\nUsing the page content above, respond to this request: PROMPT"},
		{name: "body cap", cfg: Config{MaxBytes: 25}, path: "/big", want: "Content of SRV/big (text/plain, 25 bytes); cut off, the page is longer:\n\nabcdefghijabcdefghijabcde\n\n---\nUsing the page content above, respond to this request: PROMPT"},
		{name: "text cap", cfg: Config{MaxChars: 5}, path: "/big", want: "Content of SRV/big (text/plain, 1000 bytes); cut off, the page is longer:\n\nabcde\n\n---\nUsing the page content above, respond to this request: PROMPT"},
		{name: "not found", path: "/missing", want: "SRV/missing returned HTTP 404 Not Found\nnothing here", isError: true},
		{name: "binary refused", path: "/image", want: "SRV/image is image/png, not a text page; WebFetch only reads HTML and text", isError: true},
		{name: "redirect loop", path: "/loop", want: "SRV/loop redirected more than 10 times", isError: true},
		{name: "timeout", cfg: Config{Timeout: 200 * time.Millisecond}, path: "/slow", want: "fetching SRV/slow timed out after 200ms", isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.NamedHost = loopbackNamed
			res, err := fetch(t, New(tt.cfg), t.Context(), srv.URL+tt.path, "PROMPT")
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(res.TextOf(), srv.URL, "SRV")
			if diff := cmp.Diff(tt.want, got); diff != "" || res.IsError != tt.isError {
				t.Errorf("is_error %v; (-want +got):\n%s", res.IsError, diff)
			}
		})
	}
}

func TestWebFetchCrossHostRedirect(t *testing.T) {
	srv := site(t)
	res, err := fetch(t, New(Config{NamedHost: loopbackNamed}), t.Context(), srv.URL+"/away", "p")
	if err != nil || res.IsError {
		t.Fatalf("%q, %v", res.TextOf(), err)
	}
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	target := "http://localhost:" + port + "/plain"
	want := srv.URL + "/away redirects to a different host: " + target + "\nThe redirect was not followed. To fetch that page, call WebFetch again with url \"" + target + "\" and the same prompt."
	if diff := cmp.Diff(want, res.TextOf()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWebFetchSummarize(t *testing.T) {
	srv := site(t)
	var gotContent, gotPrompt string
	w := New(Config{NamedHost: loopbackNamed, Summarize: func(_ context.Context, content, prompt string) (string, error) {
		gotContent, gotPrompt = content, prompt
		return "It says: just text.", nil
	}})
	res, err := fetch(t, w, t.Context(), srv.URL+"/plain", "what does it say?")
	if err != nil || res.TextOf() != "From "+srv.URL+"/plain:\n\nIt says: just text." {
		t.Errorf("%q, %v", res.TextOf(), err)
	}
	if gotContent != "just text\n<not html>" || gotPrompt != "what does it say?" {
		t.Errorf("summariser got %q, %q", gotContent, gotPrompt)
	}
	failing := New(Config{NamedHost: loopbackNamed, Summarize: func(context.Context, string, string) (string, error) { return "", errors.New("model down") }})
	res, _ = fetch(t, failing, t.Context(), srv.URL+"/plain", "p")
	if !strings.Contains(res.TextOf(), "(summarising failed: model down; the page text follows):\n\njust text") {
		t.Errorf("fallback: %q", res.TextOf())
	}
}

func TestWebFetchCancel(t *testing.T) {
	srv := site(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := fetch(t, New(Config{NamedHost: loopbackNamed}), ctx, srv.URL+"/slow", "p"); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "http://example.com/a#frag", want: "https://example.com/a"},
		{in: "https://example.com", want: "https://example.com"},
		{in: "http://localhost:8080/x", want: "http://localhost:8080/x"},
		{in: "http://api.localhost/x", want: "http://api.localhost/x"},
		{in: "http://127.0.0.5/", want: "http://127.0.0.5/"},
		{in: "http://[::1]:9/", want: "http://[::1]:9/"},
		{in: "ftp://example.com/", bad: true},
		{in: "example.com/page", bad: true},
		{in: "https://user:pw@example.com/", bad: true},
		{in: "https:///nohost", bad: true},
		{in: "http://%zz", bad: true},
	}
	for _, tt := range tests {
		u, err := checkURL(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("%q accepted as %v", tt.in, u)
			}
			continue
		}
		if err != nil || u.String() != tt.want {
			t.Errorf("checkURL(%q) = %v, %v; want %s", tt.in, u, err, tt.want)
		}
	}
}

func TestPermittedRedirect(t *testing.T) {
	parse := func(s string) *url.URL { u, _ := url.Parse(s); return u }
	tests := []struct {
		from, to string
		ok       bool
	}{
		{"https://a.com/x", "https://a.com/y", true},
		{"https://a.com/x", "https://www.a.com/y", true},
		{"https://www.a.com/x", "https://a.com/y", true},
		{"http://a.com/x", "https://a.com/y", true},
		{"https://a.com/x", "http://a.com/y", false},
		{"https://a.com/x", "https://b.com/y", false},
		{"https://a.com/x", "https://a.com:8443/y", false},
		{"https://a.com/x", "https://u:p@a.com/y", false},
		{"https://A.com/x", "https://a.COM/y", true},
	}
	for _, tt := range tests {
		if got := permittedRedirect(parse(tt.from), parse(tt.to)); got != tt.ok {
			t.Errorf("%s → %s: %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}
}

func TestWebFetchDef(t *testing.T) {
	w := New(Config{NamedHost: loopbackNamed})
	if tr := w.Traits(nil); tr.ReadOnly || !tr.ConcurrencySafe || w.Def().Name != "WebFetch" {
		t.Errorf("Def/Traits wrong: %+v", tr)
	}
}

// loopbackNamed stands for rules naming the test server's hosts.
func loopbackNamed(host string) bool { return host == "127.0.0.1" || host == "localhost" }
