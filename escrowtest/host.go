package escrowtest

import (
	"net"
	"net/http"
	"slices"
	"strings"
)

// A page on any site can make a browser send requests to a name its owner points at
// 127.0.0.1 (DNS rebinding): the browser then treats the emulator as that site and reads
// its answers, the credentials POST /_emulator/customers hands out included. The names
// such a page can use are the attacker's, never a loopback name or address, so the
// emulator answers only requests whose Host is one of those, or one it was told it serves
// under (WithHosts), and answers any other with 421 Misdirected Request before any route.

// WithHosts adds names or addresses, beside the loopback ones (localhost, *.localhost,
// 127.0.0.0/8, ::1), that requests may address the emulator by in their Host header: the
// address it serves on when that is not a loopback one. A request addressed to any other
// host is answered 421 Misdirected Request, on the API and the control API alike. Entries
// may carry a port, which is ignored.
func WithHosts(hosts ...string) Option {
	return func(c *config) {
		for _, h := range hosts {
			c.hosts = append(c.hosts, hostName(h))
		}
	}
}

// hostName is a Host header's name, without port or brackets, lowercase, without a
// trailing dot.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return strings.ToLower(host)
}

// loopbackHost reports whether a host name is a loopback name or address.
func loopbackHost(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// hostAllowed reports whether the emulator answers a request addressed to hostport.
func (e *Emulator) hostAllowed(hostport string) bool {
	host := hostName(hostport)
	return host != "" && (loopbackHost(host) || slices.Contains(e.cfg.hosts, host))
}

// misdirected is the answer to a request addressed to a host the emulator does not serve.
func misdirected() response {
	return newError(http.StatusMisdirectedRequest, "misdirected_request",
		"the emulator answers requests addressed to a loopback name or address, or to a host it was told it serves (escrowtest.WithHosts, escrow emulator --addr); this request's Host is none of them").response()
}
