package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
)

// nonPublic are the address ranges WebFetch does not reach unless a rule
// names the host: loopback, private networks, link-local (cloud metadata
// services live at 169.254.169.254), carrier-grade NAT, unique-local IPv6,
// and the addresses that mean "this host" or "everyone".
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("224.0.0.0/3"), // multicast and reserved, broadcast included
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

// public reports whether ip is an address on the public internet.
func public(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return ip.IsValid()
}

// addressError is a refused address, shown to the model.
type addressError struct {
	host string
	ip   netip.Addr
}

func (e *addressError) Error() string {
	if e.host == e.ip.String() {
		return fmt.Sprintf("%s is not a public address (loopback, private or link-local); it is fetched only when a permission rule names it, e.g. WebFetch(domain:%s)", e.host, e.host)
	}
	return fmt.Sprintf("%s is at %s, which is not a public address (loopback, private or link-local); it is fetched only when a permission rule names it, e.g. WebFetch(domain:%s)", e.host, e.ip, e.host)
}

// dial connects to addr ("host:port") after checking every address the
// host resolves to; it dials the checked address itself, so a DNS answer
// that changes between the check and the connection (rebinding) cannot
// slip through. The proxy of the environment is dialled unchecked: it is
// the user's own configuration.
func (w *fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	named := w.proxies[addr] || (w.cfg.NamedHost != nil && w.cfg.NamedHost(host))
	ips, err := w.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{}
	if !named {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !public(ap.Addr()) {
				return &addressError{host: host, ip: ap.Addr()}
			}
			return nil
		}
	}
	var firstErr error
	for _, ip := range ips {
		if !named && !public(ip) {
			if firstErr == nil {
				firstErr = &addressError{host: host, ip: ip}
			}
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("no address found for %s", host)
	}
	return nil, firstErr
}

// lookup resolves host (an IP literal is itself).
func (w *fetcher) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	var ips []net.IP
	var err error
	if w.cfg.Resolve != nil {
		ips, err = w.cfg.Resolve(ctx, host)
	} else {
		ips, err = net.DefaultResolver.LookupIP(ctx, "ip", host)
	}
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, a.Unmap())
		}
	}
	return out, nil
}

// checkViaProxy vets the target of a request that goes through a proxy,
// where the connection we dial is the proxy's: the target's addresses are
// looked up and checked here (a rebinding DNS answer the proxy sees later
// is the proxy's to stop).
func (w *fetcher) checkViaProxy(ctx context.Context, req *http.Request) error {
	if w.proxy == nil {
		return nil
	}
	if p, err := w.proxy(req); err != nil || p == nil {
		return err
	}
	host := req.URL.Hostname()
	if w.cfg.NamedHost != nil && w.cfg.NamedHost(host) {
		return nil
	}
	ips, err := w.lookup(ctx, host)
	if err != nil {
		return err
	}
	for _, ip := range ips {
		if !public(ip) {
			return &addressError{host: host, ip: ip}
		}
	}
	return nil
}

// proxyAddrs returns the host:port of each proxy the environment names.
func proxyAddrs(proxy func(*http.Request) (*url.URL, error)) map[string]bool {
	out := map[string]bool{}
	for _, target := range []string{"http://example.com", "https://example.com"} {
		req, _ := http.NewRequest(http.MethodGet, target, nil)
		if u, err := proxy(req); err == nil && u != nil {
			p := u.Port()
			if p == "" {
				p = strconv.Itoa(map[string]int{"https": 443, "socks5": 1080}[u.Scheme])
				if p == "0" {
					p = "80"
				}
			}
			out[net.JoinHostPort(u.Hostname(), p)] = true
		}
	}
	return out
}
