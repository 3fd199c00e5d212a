package sandbox

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// AllowedHost is one entry of Policy.AllowHosts: a host name or IP literal
// and the TCP port calls may reach on it (0: 80 and 443).
type AllowedHost struct {
	Host string // lower case, no trailing dot; an IP literal without brackets
	Port uint16
}

func (h AllowedHost) String() string {
	if h.Port == 0 {
		return h.Host
	}
	return net.JoinHostPort(h.Host, strconv.Itoa(int(h.Port)))
}

// literal reports whether the entry is an IP address, not a name.
func (h AllowedHost) literal() bool { _, err := netip.ParseAddr(h.Host); return err == nil }

// allows reports whether the entry lets a call reach host:port (host as
// normalised by normHost).
func (h AllowedHost) allows(host string, port uint16) bool {
	if h.Host != host {
		return false
	}
	if h.Port == 0 {
		return port == 80 || port == 443
	}
	return h.Port == port
}

// ParseAllowHosts reads a comma-separated list of host[:port] entries
// (--sandbox-allow-hosts): a DNS name or an IP literal (IPv6 in brackets
// when a port follows), and optionally a port 1-65535; without a port the
// entry allows 80 and 443. Wildcards, schemes, paths and user info are
// refused with an error naming the entry.
func ParseAllowHosts(s string) ([]AllowedHost, error) {
	var out []AllowedHost
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		h, err := parseAllowHost(f)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func parseAllowHost(e string) (AllowedHost, error) {
	bad := func(why string) (AllowedHost, error) {
		return AllowedHost{}, fmt.Errorf("allowHosts entry %q: %s", e, why)
	}
	if strings.ContainsAny(e, "*?") {
		return bad("wildcards are not supported; list each host")
	}
	if strings.ContainsAny(e, "/@ \t") {
		return bad("want host or host:port, without scheme, path or user")
	}
	host, portStr := e, ""
	if strings.HasPrefix(e, "[") {
		end := strings.Index(e, "]")
		if end < 0 {
			return bad("unclosed [")
		}
		host, portStr = e[1:end], e[end+1:]
		if portStr != "" {
			if portStr[0] != ':' {
				return bad("want [ipv6]:port")
			}
			portStr = portStr[1:]
			if portStr == "" {
				return bad("empty port")
			}
		}
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return bad("brackets hold an IPv6 address only")
		}
	} else if strings.Count(e, ":") == 1 {
		host, portStr, _ = strings.Cut(e, ":")
		if portStr == "" {
			return bad("empty port")
		}
	}
	var port uint16
	if portStr != "" {
		n, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil || n == 0 {
			return bad("port must be 1-65535")
		}
		port = uint16(n)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return bad("zoned addresses are not supported")
		}
		return AllowedHost{Host: a.Unmap().String(), Port: port}, nil
	}
	name, err := normName(host)
	if err != nil {
		return bad(err.Error())
	}
	return AllowedHost{Host: name, Port: port}, nil
}

// normName lower-cases a DNS name, drops one trailing dot and checks its
// labels (letters, digits, hyphens and underscores, 1-63 bytes each).
func normName(host string) (string, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || len(host) > 253 {
		return "", fmt.Errorf("not a host name")
	}
	for _, l := range strings.Split(host, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("not a host name")
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("not a host name (character %q)", c)
			}
		}
	}
	return host, nil
}

// normHost normalises a host as a request names it, for comparison with
// the entries; "" when it is neither an IP literal nor a DNS name.
func normHost(host string) string {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return ""
		}
		return a.Unmap().String()
	}
	n, err := normName(host)
	if err != nil {
		return ""
	}
	return n
}

// public reports whether a is an address a name may resolve to: not
// loopback, private, link-local, unspecified, multicast or CGNAT.
func public(a netip.Addr) bool {
	a = a.Unmap()
	cgnat := netip.MustParsePrefix("100.64.0.0/10")
	return a.IsGlobalUnicast() && !a.IsPrivate() && !cgnat.Contains(a)
}
