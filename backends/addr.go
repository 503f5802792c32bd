package backends

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrBadAddress marks a node address heapproxy refuses to contact: a host
// that is neither an IP address nor a DNS name, a port out of range, or a
// link-local / cloud metadata address (unless Options.AllowLinkLocal).
var ErrBadAddress = errors.New("bad node address")

// maxHostLen is the longest DNS name (RFC 1035: 253 characters written out).
const maxHostLen = 253

// CheckHost reports whether host is something heapproxy may put in a URL:
// an IP address (v4, or v6 without brackets or zone) or a DNS name (labels
// of letters, digits, '-' and '_', 1-63 characters, not starting or ending
// with '-', the last label not all digits, so "127.1" or "2130706433" is
// not taken for a name). It says nothing about whether the host is allowed;
// see CheckAddr.
func CheckHost(host string) error {
	if host == "" {
		return fmt.Errorf("%w: empty host", ErrBadAddress)
	}
	if len(host) > maxHostLen+1 {
		return fmt.Errorf("%w: host is %d characters, more than a DNS name's %d", ErrBadAddress, len(host), maxHostLen)
	}
	if strings.ContainsAny(host, ":%") {
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return fmt.Errorf("%w: host %q is not an IP address (IPv6 without brackets or zone) or a DNS name", ErrBadAddress, host)
		}
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	name := strings.TrimSuffix(host, ".")
	if name == "" || len(name) > maxHostLen {
		return fmt.Errorf("%w: host %q is not a DNS name", ErrBadAddress, host)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("%w: host %q is not a DNS name (label %q)", ErrBadAddress, host, l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%w: host %q is not an IP address or a DNS name (character %q)", ErrBadAddress, host, c)
			}
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" || strings.HasPrefix(strings.ToLower(last), "0x") {
		// "127.1", "0x7f.1", "2130706433": resolvers read these as IPv4.
		return fmt.Errorf("%w: host %q is neither a dotted IPv4 address nor a DNS name (its last label is numeric)", ErrBadAddress, host)
	}
	return nil
}

// CheckPort reports whether p is a TCP port a node can listen on (1-65535).
func CheckPort(p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("%w: port %d is not 1-65535", ErrBadAddress, p)
	}
	return nil
}

// metadataAddrs are cloud instance metadata services outside the
// link-local ranges (inside: 169.254.169.254 of AWS, GCP, Azure, OCI).
var metadataAddrs = [...]netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// refusedIP says why an address is refused as a node's, "" when it is not.
func refusedIP(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLinkLocalUnicast():
		if a == netip.AddrFrom4([4]byte{169, 254, 169, 254}) {
			return "the cloud instance metadata address"
		}
		return "a link-local address"
	case a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast(), a.IsMulticast():
		return "a multicast address"
	case a.IsUnspecified():
		return "the unspecified address (it reaches this machine)"
	}
	for _, m := range metadataAddrs {
		if a == m {
			return "a cloud instance metadata address"
		}
	}
	return ""
}

// linkLocalHint tells the user how to allow a refused address.
const linkLocalHint = "set discovery.allow_link_local: true (backends.Options.AllowLinkLocal) if a node really has it"

// CheckAddr checks a node's host and HTTP port (CheckHost, CheckPort) and,
// unless allowLinkLocal, refuses link-local, multicast, unspecified and
// cloud metadata IP addresses. A DNS name is checked again when it is
// dialled (see Options.AllowLinkLocal).
func CheckAddr(host string, port int, allowLinkLocal bool) error {
	if err := CheckHost(host); err != nil {
		return err
	}
	if err := CheckPort(port); err != nil {
		return err
	}
	if a, err := netip.ParseAddr(host); err == nil && !allowLinkLocal {
		if why := refusedIP(a); why != "" {
			return fmt.Errorf("%w: %s is %s; %s", ErrBadAddress, host, why, linkLocalHint)
		}
	}
	return nil
}

// hostPort is host:port with IPv6 brackets.
func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// endpoint builds the URL of path (a path with an optional "?query" that
// heapproxy wrote itself) on the node, structurally: the host never
// reaches the URL as text to be parsed.
func (n Node) endpoint(pathQuery string) *url.URL {
	p, q, _ := strings.Cut(pathQuery, "?")
	return &url.URL{Scheme: "http", Host: hostPort(n.Host, n.HTTPPort), Path: p, RawQuery: q}
}

// dialControl refuses, at connect time, the addresses CheckAddr refuses:
// it sees the address a DNS name resolved to, so a name pointing at the
// metadata service is caught too.
func dialControl(allowLinkLocal bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if allowLinkLocal {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: dial %s: %v", ErrBadAddress, address, err)
		}
		if why := refusedIP(ap.Addr()); why != "" {
			return fmt.Errorf("%w: %s is %s; %s", ErrBadAddress, ap.Addr(), why, linkLocalHint)
		}
		return nil
	}
}

// dialer returns the DialContext of the default client.
func dialer(allowLinkLocal bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: dialControl(allowLinkLocal)}
	return d.DialContext
}
