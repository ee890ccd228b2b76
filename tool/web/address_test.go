package web

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// resolveTo maps every host name to ip, as a DNS server under the
// attacker's control could (DNS rebinding).
func resolveTo(ip string) func(context.Context, string) ([]net.IP, error) {
	return func(context.Context, string) ([]net.IP, error) { return []net.IP{net.ParseIP(ip)}, nil }
}

// Loopback, link-local (cloud metadata) and private addresses are refused
// unless a rule names the host, and the address checked is the one dialled,
// so a public-looking name that resolves to loopback is refused too.
func TestWebFetchRefusesNonPublicAddresses(t *testing.T) {
	srv := site(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, u := range []string{srv.URL + "/plain", "http://localhost:" + port + "/plain"} {
		res, err := fetch(t, New(Config{}), t.Context(), u, "p")
		if err != nil || !res.IsError || !strings.Contains(res.TextOf(), "not a public address") {
			t.Errorf("%s: %q, %v; want a refusal naming a non-public address", u, res.TextOf(), err)
		}
	}
	rebind := New(Config{Resolve: resolveTo("127.0.0.1")})
	res, err := fetch(t, rebind, t.Context(), "https://docs.example.com:"+port+"/plain", "p")
	if err != nil || !res.IsError || !strings.Contains(res.TextOf(), "127.0.0.1") {
		t.Errorf("rebinding: %q, %v; want a refusal naming 127.0.0.1", res.TextOf(), err)
	}
	meta := New(Config{Resolve: resolveTo("169.254.169.254")})
	res, err = fetch(t, meta, t.Context(), "https://metadata.example.com/latest/meta-data/", "p")
	if err != nil || !res.IsError || !strings.Contains(res.TextOf(), "169.254.169.254") {
		t.Errorf("metadata: %q, %v; want a refusal naming 169.254.169.254", res.TextOf(), err)
	}
	named := New(Config{NamedHost: func(h string) bool { return h == "127.0.0.1" }})
	res, err = fetch(t, named, t.Context(), srv.URL+"/plain", "p")
	if err != nil || res.IsError || !strings.Contains(res.TextOf(), "just text") {
		t.Errorf("a host a rule names: %q, %v; want the page", res.TextOf(), err)
	}
}

// Every redirect hop is checked against the rules again: a rule for
// example.test does not cover www.example.test.
func TestWebFetchRedirectRechecksRules(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := net.SplitHostPort(r.Host)
		http.Redirect(w, r, "https://www.example.test:"+port+"/secret", http.StatusFound)
	})
	mux.HandleFunc("/secret", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret page") })
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	insecure := &tls.Config{InsecureSkipVerify: true} // the test server's certificate names neither host
	only := func(hosts ...string) func(context.Context, *url.URL) bool {
		return func(_ context.Context, u *url.URL) bool { return slices.Contains(hosts, u.Hostname()) }
	}
	w := New(Config{Resolve: resolveTo("127.0.0.1"), NamedHost: func(string) bool { return true }, TLS: insecure,
		Allowed: only("example.test")})
	res, err := fetch(t, w, t.Context(), "https://example.test:"+port+"/start", "p")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.TextOf(), "secret page") || !strings.Contains(res.TextOf(), "redirects to a different host: https://www.example.test:") {
		t.Errorf("result %q: the redirect to www.example.test should not be followed without a rule", res.TextOf())
	}
	both := New(Config{Resolve: resolveTo("127.0.0.1"), NamedHost: func(string) bool { return true }, TLS: insecure,
		Allowed: only("example.test", "www.example.test")})
	res, err = fetch(t, both, t.Context(), "https://example.test:"+port+"/start", "p")
	if err != nil || !strings.Contains(res.TextOf(), "secret page") {
		t.Errorf("with a rule for both hosts: %q, %v; want the redirect followed", res.TextOf(), err)
	}
}
