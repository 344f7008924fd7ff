package remote

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// Servers says which API servers a kubeconfig read from a Secret may name
// (the controller's --health-cluster-servers). Whoever may write a Secret
// in a namespace chooses its server URL, and the controller connects to
// it with its own network position: without a bound, a Secret could point
// the controller at its own loopback, the node's link-local metadata
// service or any internal address.
//
// Entries are host patterns (`edge-01.example.com`, `*.edge.example.com`:
// one or more labels before the suffix) and networks (`10.20.0.0/16`,
// `127.0.0.0/8`). The rules, checked on the server's name when the client
// is made and on every address dialled (so a name that resolves to a
// refused address is refused too):
//   - an address in a listed network is allowed;
//   - a loopback, link-local, unspecified or multicast address is refused
//     unless a listed network holds it;
//   - with no entry, every other address is allowed; with entries, only a
//     server whose name matches a pattern, or whose address is in a listed
//     network;
//   - a kubeconfig's `proxy-url` is refused unless an entry allows the
//     proxy's own host (a proxy dials what pvkit cannot check).
//
// pvctl's --cluster contexts are the user's own kubeconfig and are not
// held to this.
type Servers struct {
	patterns []string // exact names, or "*." + suffix
	networks []*net.IPNet
}

// ParseServers reads --health-cluster-servers entries.
func ParseServers(entries []string) (*Servers, error) {
	s := &Servers{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			continue
		case strings.Contains(e, "/"):
			_, n, err := net.ParseCIDR(e)
			if err != nil {
				return nil, fmt.Errorf("--health-cluster-servers %q: not a network (CIDR, as 10.20.0.0/16): %v", e, err)
			}
			s.networks = append(s.networks, n)
		case net.ParseIP(e) != nil:
			return nil, fmt.Errorf("--health-cluster-servers %q: an address is given as a network (%s/32, or /128)", e, e)
		default:
			name := strings.ToLower(strings.TrimPrefix(e, "*."))
			if strings.ContainsAny(name, "*:/ ") || name == "" {
				return nil, fmt.Errorf("--health-cluster-servers %q: want a host name, a *.suffix pattern, or a network (CIDR)", e)
			}
			s.patterns = append(s.patterns, strings.ToLower(e))
		}
	}
	sort.Strings(s.patterns)
	return s, nil
}

// String is the entries, as given to the flag.
func (s *Servers) String() string {
	if s == nil {
		return ""
	}
	out := append([]string(nil), s.patterns...)
	for _, n := range s.networks {
		out = append(out, n.String())
	}
	return strings.Join(out, ",")
}

// ServerRefusedError is a server or an address the Servers bound refuses.
type ServerRefusedError struct{ What, Why string }

func (e *ServerRefusedError) Error() string {
	return fmt.Sprintf("%s is refused: %s (the controller's --health-cluster-servers says which servers a kubeconfig Secret may name)", e.What, e.Why)
}

func (s *Servers) listed() bool { return s != nil && (len(s.patterns) > 0 || len(s.networks) > 0) }

// matches reports whether host matches a listed pattern.
func (s *Servers) matches(host string) bool {
	if s == nil {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, p := range s.patterns {
		if suffix, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) && len(host) > len(suffix)+1 {
				return true
			}
		} else if host == p {
			return true
		}
	}
	return false
}

// inNetwork reports whether ip is in a listed network.
func (s *Servers) inNetwork(ip net.IP) bool {
	if s == nil {
		return false
	}
	for _, n := range s.networks {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// checkAddress is the rule for one address, the name having matched a
// pattern (byName) or not.
func (s *Servers) checkAddress(ip net.IP, byName bool) error {
	what := "address " + ip.String()
	switch {
	case s.inNetwork(ip):
		return nil
	case ip.IsLoopback():
		return &ServerRefusedError{what, "a loopback address (the controller's own)"}
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return &ServerRefusedError{what, "a link-local address (the node's, such as a metadata service)"}
	case ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		return &ServerRefusedError{what, "not a server's address"}
	case !s.listed() || byName:
		return nil
	}
	return &ServerRefusedError{what, "in no network listed"}
}

// check is the rule for a server URL's host when the client is made: an
// address is checked now; a name must match a pattern when entries are
// listed and no network is (else its addresses are checked when dialled).
// It reports whether the name matched a pattern.
func (s *Servers) check(host string) (bool, error) {
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return false, s.checkAddress(ip, false)
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") && !s.matches(host) && !s.inNetwork(net.IPv4(127, 0, 0, 1)) {
		return false, &ServerRefusedError{"host " + host, "the controller's own loopback"}
	}
	byName := s.matches(host)
	if s.listed() && !byName && len(s.networks) == 0 {
		return false, &ServerRefusedError{"host " + host, "it matches no host pattern listed"}
	}
	return byName, nil
}

// Hold makes cfg's connections obey s: the server's host checked now, a
// proxy refused unless an entry allows it, and every address dialled
// checked (after name resolution, so a name cannot lead elsewhere).
func (s *Servers) Hold(cfg *rest.Config, timeout time.Duration) error {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return fmt.Errorf("server %q: not a URL", cfg.Host)
	}
	byName, err := s.check(u.Hostname())
	if err != nil {
		return err
	}
	if cfg.Proxy != nil {
		p, err := cfg.Proxy(&http.Request{URL: u})
		if err != nil {
			return fmt.Errorf("proxy-url: %v", err)
		}
		if p != nil {
			ip := net.ParseIP(p.Hostname())
			if !s.matches(p.Hostname()) && (ip == nil || !s.inNetwork(ip)) {
				return &ServerRefusedError{"proxy-url " + p.Host, "a proxy dials what pvkit cannot check; list its host to allow it"}
			}
			if ip == nil {
				byName = true // the proxy's name is listed: its addresses are dialled
			}
		}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip := net.ParseIP(host)
			if ip == nil {
				return &ServerRefusedError{"address " + host, "not an IP address"}
			}
			return s.checkAddress(ip, byName)
		}}
	cfg.Dial = d.DialContext
	return nil
}
