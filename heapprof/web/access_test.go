package web

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// userAuth is a real Authenticator over a user table and a profile_users
// list, as the server's is over its config.
type userAuth struct {
	passwords    map[string]string
	profileUsers map[string]bool
	err          error // the check itself fails (a user store down)
}

func (a userAuth) Authenticate(_ context.Context, user, password string) (bool, error) {
	if a.err != nil {
		return false, a.err
	}
	want, known := a.passwords[user]
	match := subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1
	return known && match && a.profileUsers[user], nil
}

const (
	rootPassword = "s3cret-root-pw"
	biPassword   = "s3cret-bi-pw"
	testToken    = "s3cret-scrape-token"
)

func testAuth() userAuth {
	return userAuth{
		passwords:    map[string]string{"root": rootPassword, "bi": biPassword},
		profileUsers: map[string]bool{"root": true},
	}
}

// accessServer starts the view on a free loopback port; listen turns the
// port into Options.ListenAddr ("" leaves it unset).
func accessServer(t *testing.T, opts Options, listen func(port string) string) (*httptest.Server, *observer.ObservedLogs) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if listen != nil {
		opts.ListenAddr = listen(port)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	opts.Logger = zap.New(core)
	if opts.Store == nil {
		opts.Store = testStore()
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, logs
}

func TestAccess(t *testing.T) {
	actual := func(port string) string { return "127.0.0.1:" + port }
	allIfaces := func(port string) string { return "0.0.0.0:" + port }
	named := func(port string) string { return "heapproxy.internal:" + port }
	basic := func(user, pw string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, pw) }
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	top := "/snapshots/" + idFirst + "/top"
	download := "/snapshots/" + idFirst + "/download"
	tests := []struct {
		name      string
		opts      Options
		listen    func(port string) string
		host      string // Host header, %s is the port; "" the URL's
		cred      func(*http.Request)
		path      string
		code      int
		challenge []string // WWW-Authenticate values on a 401
		body      string
	}{
		// Loopback, nothing configured: open, as `make run` has it.
		{name: "loopback default list", path: "/", code: 200, body: idFirst},
		{name: "loopback default profile", path: top, code: 200, body: "allocFirst"},
		{name: "loopback listen addr", listen: actual, path: top, code: 200},
		{name: "loopback Host localhost", listen: actual, host: "localhost:%s", path: "/", code: 200},
		{name: "loopback Host LOCALHOST.", listen: actual, host: "LOCALHOST.:%s", path: "/", code: 200},
		{name: "loopback Host ::1", listen: actual, host: "[::1]:%s", path: "/", code: 200},
		{name: "fallback Host localhost", host: "localhost:%s", path: "/", code: 200},

		// DNS rebinding: a page of attacker.example, resolved to 127.0.0.1.
		{name: "rebinding list", listen: actual, host: "attacker.example:%s", path: "/", code: 421, body: "http_allowed_hosts"},
		{name: "rebinding profile", listen: actual, host: "attacker.example:%s", path: download, code: 421},
		{name: "rebinding healthz", listen: actual, host: "attacker.example:%s", path: "/healthz", code: 421},
		{name: "rebinding fallback", host: "attacker.example:%s", path: top, code: 421},
		{name: "rebinding with credentials", opts: Options{Authenticator: testAuth()}, listen: allIfaces,
			host: "attacker.example:%s", cred: basic("root", rootPassword), path: "/", code: 421},
		{name: "no Host", listen: actual, host: " ", path: "/", code: 421},
		{name: "allowed host", opts: Options{AllowedHosts: []string{"heapproxy.example.com:443"}}, listen: actual,
			host: "HeapProxy.Example.com", path: "/", code: 200},
		{name: "named listener", opts: Options{Authenticator: testAuth()}, listen: named,
			host: "heapproxy.internal:%s", cred: basic("root", rootPassword), path: "/", code: 200},

		// Not on loopback: credentials.
		{name: "anonymous list", opts: Options{Authenticator: testAuth()}, listen: allIfaces, path: "/", code: 401,
			challenge: []string{`Basic realm="heapproxy"`}},
		{name: "anonymous profile", opts: Options{Authenticator: testAuth()}, listen: allIfaces, path: top, code: 401},
		{name: "anonymous download", opts: Options{Authenticator: testAuth()}, listen: allIfaces, path: download, code: 401},
		{name: "anonymous diff", opts: Options{Authenticator: testAuth()}, listen: allIfaces,
			path: "/diff/" + idFirst + "/" + idSecond + "/top", code: 401},
		{name: "wrong password", opts: Options{Authenticator: testAuth()}, listen: allIfaces,
			cred: basic("root", "guess"), path: top, code: 401, challenge: []string{`Basic realm="heapproxy"`}},
		{name: "unknown user", opts: Options{Authenticator: testAuth()}, listen: allIfaces,
			cred: basic("mallory", rootPassword), path: top, code: 401},
		{name: "not a profile user", opts: Options{Authenticator: testAuth()}, listen: allIfaces,
			cred: basic("bi", biPassword), path: top, code: 401},
		{name: "profile user list", opts: Options{Authenticator: testAuth()}, listen: allIfaces,
			cred: basic("root", rootPassword), path: "/", code: 200, body: idFirst},
		{name: "profile user profile", opts: Options{Authenticator: testAuth()}, listen: allIfaces,
			cred: basic("root", rootPassword), path: top, code: 200, body: "allocFirst"},
		{name: "healthz open", opts: Options{Authenticator: testAuth()}, listen: allIfaces, path: "/healthz", code: 200},
		{name: "metrics anonymous", opts: Options{Authenticator: testAuth(), BearerToken: testToken}, listen: allIfaces,
			path: "/metrics", code: 401, challenge: []string{`Basic realm="heapproxy"`, `Bearer realm="heapproxy"`}},
		{name: "metrics bearer", opts: Options{Authenticator: testAuth(), BearerToken: testToken}, listen: allIfaces,
			cred: bearer(testToken), path: "/metrics", code: 200, body: "heapproxy_connections_open"},
		{name: "metrics wrong bearer", opts: Options{Authenticator: testAuth(), BearerToken: testToken}, listen: allIfaces,
			cred: bearer(testToken + "x"), path: "/metrics", code: 401},
		{name: "bearer profile", opts: Options{BearerToken: testToken}, listen: allIfaces,
			cred: bearer(testToken), path: top, code: 200},
		{name: "basic without authenticator", opts: Options{BearerToken: testToken}, listen: allIfaces,
			cred: basic("root", testToken), path: top, code: 401, challenge: []string{`Bearer realm="heapproxy"`}},
		{name: "nothing configured", listen: allIfaces, path: "/", code: 403, body: "http_bearer_token"},
		{name: "authenticator fails", opts: Options{Authenticator: userAuth{err: errors.New("user store down")}}, listen: allIfaces,
			cred: basic("root", rootPassword), path: "/", code: 500},

		// Loopback with credentials configured: they apply.
		{name: "loopback with authenticator anonymous", opts: Options{Authenticator: testAuth()}, listen: actual,
			path: "/", code: 401, challenge: []string{`Basic realm="heapproxy"`}},
		{name: "loopback with authenticator user", opts: Options{Authenticator: testAuth()}, listen: actual,
			cred: basic("root", rootPassword), path: "/", code: 200},
		{name: "loopback with token anonymous", opts: Options{BearerToken: testToken}, listen: actual, path: "/", code: 401},
	}
	client := &http.Client{
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, logs := accessServer(t, tt.opts, tt.listen)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
				req.Host = strings.TrimSpace(strings.ReplaceAll(tt.host, "%s", port))
				if req.Host == "" {
					// HTTP/1.0 without Host: written by hand below.
					req = nil
				}
			}
			if tt.cred != nil && req != nil {
				tt.cred(req)
			}
			var resp *http.Response
			if req == nil {
				resp = rawHTTP10(t, srv.Listener.Addr().String(), tt.path)
			} else if resp, err = client.Do(req); err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			body := string(b)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.code, body)
			}
			if tt.body != "" && !strings.Contains(body, tt.body) {
				t.Errorf("body lacks %q: %.300s", tt.body, body)
			}
			got := resp.Header.Values("WWW-Authenticate")
			if tt.code == http.StatusUnauthorized && tt.challenge != nil && fmt.Sprint(got) != fmt.Sprint(tt.challenge) {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.challenge)
			}
			if tt.code != http.StatusUnauthorized && len(got) > 0 {
				t.Errorf("WWW-Authenticate %q on a %d", got, tt.code)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("security headers missing: %v", resp.Header)
			}
			for _, secret := range []string{rootPassword, biPassword, testToken, "guess"} {
				if strings.Contains(body, secret) {
					t.Errorf("answer carries a credential: %.300s", body)
				}
				for _, e := range logs.All() {
					if line := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(line, secret) {
						t.Errorf("log carries a credential: %s", line)
					}
				}
			}
		})
	}
}

// rawHTTP10 sends an HTTP/1.0 request without a Host header, which Go's
// client cannot send.
func rawHTTP10(t *testing.T, addr, path string) *http.Response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.0\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestNewRejectsBadAccessOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"listen addr without port", Options{ListenAddr: "127.0.0.1"}},
		{"empty allowed host", Options{AllowedHosts: []string{":443"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Store = testStore()
			if _, err := New(tt.opts); err == nil {
				t.Errorf("New(%+v) succeeded", tt.opts)
			}
		})
	}
}
