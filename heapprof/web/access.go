package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// Authenticator checks the credentials of HTTP basic auth. The server
// implements it over its users and profile_users, so that the view shows
// profiles to the users ADMIN EXECUTE HeapProf answers, and no one else.
//
// Implementations compare passwords in constant time and keep the password
// out of errors and logs. ok false with a nil error is a refusal (unknown
// user, wrong password, not a profile user); an error means the check
// itself failed and is answered 500.
type Authenticator interface {
	Authenticate(ctx context.Context, user, password string) (ok bool, err error)
}

// realm is the basic auth realm browsers show in their login prompt.
const realm = "heapproxy"

// access is the view's access rule, fixed at New.
type access struct {
	// listenHost is Options.ListenAddr's host, lower case, "" if unknown.
	listenHost string
	// listenKnown: Options.ListenAddr was given; else the address each
	// request arrived on stands for the listener's.
	listenKnown bool
	loopback    bool // the listener is on loopback (when listenKnown)
	hosts       map[string]bool
	auth        Authenticator
	tokenHash   *[sha256.Size]byte // of Options.BearerToken; nil: no token
}

// loopbackHosts are the names a browser on the same machine uses for a
// loopback listener.
func loopbackHosts() []string { return []string{"localhost", "127.0.0.1", "::1"} }

func newAccess(opts Options) (*access, error) {
	a := &access{hosts: map[string]bool{}, auth: opts.Authenticator}
	if opts.BearerToken != "" {
		h := sha256.Sum256([]byte(opts.BearerToken))
		a.tokenHash = &h
	}
	if opts.ListenAddr != "" {
		host, _, err := net.SplitHostPort(opts.ListenAddr)
		if err != nil {
			return nil, fmt.Errorf("web: Options.ListenAddr %q: %w", opts.ListenAddr, err)
		}
		a.listenKnown = true
		a.listenHost = normalizeHost(host)
		a.loopback = isLoopbackHost(a.listenHost)
		if a.listenHost != "" && !isUnspecified(a.listenHost) {
			a.hosts[a.listenHost] = true
		}
		if a.loopback {
			for _, h := range loopbackHosts() {
				a.hosts[h] = true
			}
		}
	}
	for _, h := range opts.AllowedHosts {
		n := hostOnly(h)
		if n == "" {
			return nil, fmt.Errorf("web: Options.AllowedHosts: empty host in %q", h)
		}
		a.hosts[n] = true
	}
	return a, nil
}

// open reports whether requests that arrived on local need no credentials:
// only on a loopback listener with neither an authenticator nor a token.
func (a *access) open(local net.IP) bool {
	if a.auth != nil || a.tokenHash != nil {
		return false
	}
	if a.listenKnown {
		return a.loopback
	}
	return local != nil && local.IsLoopback()
}

// hostAllowed reports whether the request's Host names this view. A name
// not configured is refused: that is what a DNS-rebinding page sends. An IP
// literal equal to the address the request arrived on is always allowed
// (no DNS name, so nothing to rebind), which covers listeners on 0.0.0.0.
func (a *access) hostAllowed(host string, local net.IP) bool {
	h := hostOnly(host)
	if h == "" {
		return false
	}
	if a.hosts[h] {
		return true
	}
	if ip := net.ParseIP(h); ip != nil && local != nil {
		if ip.Equal(local) {
			return true
		}
	}
	if !a.listenKnown && local != nil && local.IsLoopback() {
		for _, l := range loopbackHosts() {
			if h == l {
				return true
			}
		}
	}
	return false
}

// checkToken compares a bearer token in constant time (the hashes have one
// length, so the token's length does not leak either).
func (a *access) checkToken(token string) bool {
	if a.tokenHash == nil {
		return false
	}
	h := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(h[:], a.tokenHash[:]) == 1
}

// guard applies the access rule: the Host check on every request, then
// credentials on all but /healthz. It answers refused requests itself and
// reports whether next may serve the request.
func (h *Handler) guard(w http.ResponseWriter, r *http.Request) bool {
	local := localIP(r.Context())
	if !h.access.hostAllowed(r.Host, local) {
		http.Error(w, fmt.Sprintf("heapproxy: the HTTP view does not answer to Host %q: "+
			"if that name is this server's, add it to http_allowed_hosts in the configuration", r.Host),
			http.StatusMisdirectedRequest)
		return false
	}
	if r.URL.Path == "/healthz" || h.access.open(local) {
		return true
	}
	a := h.access
	if a.auth == nil && a.tokenHash == nil {
		http.Error(w, "heapproxy: the HTTP view is not on a loopback address and has no credentials configured: "+
			"set http_bearer_token, or users and profile_users, or listen on 127.0.0.1", http.StatusForbidden)
		return false
	}
	authz := r.Header.Get("Authorization")
	if scheme, token, ok := strings.Cut(authz, " "); ok && strings.EqualFold(scheme, "Bearer") {
		if a.checkToken(strings.TrimSpace(token)) {
			return true
		}
		h.refuse(w, r, "wrong bearer token")
		return false
	}
	user, password, ok := r.BasicAuth()
	if !ok || a.auth == nil {
		h.refuse(w, r, "no credentials")
		return false
	}
	good, err := a.auth.Authenticate(r.Context(), user, password)
	if err != nil {
		// The error is the authenticator's; its contract keeps passwords out.
		h.log.Warn("http view: authentication failed", zap.String("remote", r.RemoteAddr), zap.Error(err))
		http.Error(w, "heapproxy: authentication failed: internal error (see the server log)", http.StatusInternalServerError)
		return false
	}
	if !good {
		h.refuse(w, r, "wrong user or password, or not a profile user")
		return false
	}
	return true
}

// refuse answers 401 with the challenges the view accepts. The log line
// names neither the user nor what was sent.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, why string) {
	h.log.Debug("http view: credentials refused", zap.String("remote", r.RemoteAddr), zap.String("path", r.URL.Path), zap.String("reason", why))
	if h.access.auth != nil {
		w.Header().Add("WWW-Authenticate", `Basic realm="`+realm+`"`)
	}
	if h.access.tokenHash != nil {
		w.Header().Add("WWW-Authenticate", `Bearer realm="`+realm+`"`)
	}
	http.Error(w, "heapproxy: the HTTP view needs credentials: a profile user's name and password, or the bearer token",
		http.StatusUnauthorized)
}

// localIP is the address the request's connection arrived on, nil if the
// server did not record it.
func localIP(ctx context.Context) net.IP {
	addr, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return nil
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil
	}
	return net.ParseIP(host)
}

// hostOnly is a Host header's or host[:port]'s host part, normalized.
func hostOnly(hostport string) string {
	hostport = strings.TrimSpace(hostport)
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return normalizeHost(host)
}

// normalizeHost lower-cases a host name and drops IPv6 brackets and a
// trailing dot, so that "LOCALHOST." and "localhost" compare equal.
func normalizeHost(host string) string {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.TrimSuffix(host, ".")
	if ip := net.ParseIP(host); ip != nil {
		return ip.String()
	}
	return strings.ToLower(host)
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}
