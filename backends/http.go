package backends

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Defaults for calls to nodes.
const (
	// DefaultTimeout is StarRocks' FE wait for ADMIN EXECUTE.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxResponseBytes bounds what is read from a node.
	DefaultMaxResponseBytes = 256 << 20
	// snippetBytes is how much of a bad answer an error quotes.
	snippetBytes = 160
)

// caller makes bounded HTTP calls to nodes.
type caller struct {
	client         *http.Client
	timeout        time.Duration
	maxBytes       int64
	allowLinkLocal bool
}

func newCaller(client *http.Client, timeout time.Duration, maxBytes int64, allowLinkLocal bool) *caller {
	if client == nil {
		client = defaultClient(allowLinkLocal)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	return &caller{client: client, timeout: timeout, maxBytes: maxBytes, allowLinkLocal: allowLinkLocal}
}

// defaultClient talks to nodes directly: no proxy from the environment
// (a node address is not meant for an HTTP proxy) and no redirects (a
// redirect would contact an address nobody registered); a 3xx answer is
// returned as it is, and reported as an error status. Unless
// allowLinkLocal, it refuses to connect to link-local and metadata
// addresses, whatever name resolved to them. It asks for no compression,
// so what a node sends is what is counted against the size limit.
func defaultClient(allowLinkLocal bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = dialer(allowLinkLocal)
	t.DisableCompression = true
	t.MaxResponseHeaderBytes = 64 << 10
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// answer is a node's HTTP answer, read in full (within the size limit).
type answer struct {
	status int
	body   []byte
	// sentAuth is whether the request carried basic auth.
	sentAuth bool
}

// statusErr is the *statusError of an answer to method path.
func (a answer) statusErr(method, path string) *statusError {
	return &statusError{Method: method, Path: path, Status: a.status, Body: a.body, SentAuth: a.sentAuth}
}

// statusError is a non-2xx answer.
type statusError struct {
	Method, Path string
	Status       int
	Body         []byte
	// SentAuth is whether the request carried basic auth.
	SentAuth bool
	// Hint says which versions have the route and what enables it (404).
	Hint string
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if len(bytes.TrimSpace(e.Body)) > 0 {
		msg += ": " + snippet(e.Body)
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	switch e.Status {
	case http.StatusUnauthorized:
		if e.SentAuth {
			msg += " (the node refused the HTTP user and password sent: check the node's http_user and http_password / http_password_file)"
		} else {
			msg += " (the node wants HTTP basic auth, as a Doris BE with enable_all_http_auth=true does: set http_user and " +
				"http_password or http_password_file on the node in heapproxy's config, or discovery.http_user and " +
				"discovery.http_password for discovered nodes)"
		}
	case http.StatusForbidden:
		if e.SentAuth {
			msg += " (the node, or its FE, refused the HTTP user and password sent: check http_user and http_password / " +
				"http_password_file for this node)"
		} else {
			msg += " (the node refuses this request without credentials: set http_user and http_password or http_password_file)"
		}
	}
	return msg
}

// do sends one request and reads the whole answer. Any status is returned
// as an answer; only transport failures, timeouts and oversize bodies are
// errors. Errors are *NodeError.
func (c *caller) do(ctx context.Context, n Node, op, method, path string, body []byte) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	if err := CheckAddr(n.Host, n.HTTPPort, c.allowLinkLocal); err != nil {
		return answer{}, &NodeError{Node: n, Op: op, Err: fmt.Errorf("%s %s: %w", method, path, err)}
	}
	req, err := http.NewRequestWithContext(ctx, method, n.endpoint(path).String(), rd)
	if err != nil {
		return answer{}, &NodeError{Node: n, Op: op, Err: fmt.Errorf("%s %s: %w", method, path, err)}
	}
	if n.HTTPUser != "" {
		req.SetBasicAuth(n.HTTPUser, string(n.HTTPPassword))
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return answer{}, &NodeError{Node: n, Op: op, Err: fmt.Errorf("%s %s: %w", method, path, c.cause(ctx, err))}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return answer{}, &NodeError{Node: n, Op: op, Err: fmt.Errorf("%s %s: reading answer: %w", method, path, c.cause(ctx, err))}
	}
	if int64(len(data)) > c.maxBytes {
		return answer{}, &NodeError{Node: n, Op: op, Err: fmt.Errorf("%s %s: %w (limit %d bytes)", method, path, ErrTooLarge, c.maxBytes)}
	}
	return answer{status: resp.StatusCode, body: data, sentAuth: n.HTTPUser != ""}, nil
}

// ErrTooLarge marks an answer over the size limit.
var ErrTooLarge = errors.New("answer too large")

// ErrTimeout marks a node that did not answer in time.
var ErrTimeout = errors.New("timeout")

// ErrBadAnswer marks an answer that is not what the API defines.
var ErrBadAnswer = errors.New("unexpected answer")

// timeoutError keeps the transport error for errors.Is(context.DeadlineExceeded).
type timeoutError struct {
	after time.Duration
	err   error
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer within %s (timeout)", e.after)
}

func (e *timeoutError) Unwrap() []error { return []error{ErrTimeout, e.err} }

// cause turns a transport error into one that says plainly what happened.
func (c *caller) cause(ctx context.Context, err error) error {
	// url.Error repeats method and URL, which the caller already names.
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &timeoutError{after: c.timeout, err: err}
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("connection refused (is the node up, and is that its HTTP port?): %w", err)
	case strings.Contains(err.Error(), "malformed HTTP"):
		return fmt.Errorf("the answer is not HTTP (is that the node's HTTP port?): %w", err)
	}
	return err
}

// call is do plus a 2xx check: other statuses become *NodeError wrapping a
// *statusError.
func (c *caller) call(ctx context.Context, n Node, op, method, path string, body []byte) ([]byte, error) {
	a, err := c.do(ctx, n, op, method, path, body)
	if err != nil {
		return nil, err
	}
	if a.status < 200 || a.status > 299 {
		se := a.statusErr(method, path)
		if a.status == http.StatusNotFound {
			se.Hint = missingRouteHint(n.Kind, path)
		}
		return nil, &NodeError{Node: n, Op: op, Err: se}
	}
	return a.body, nil
}

// badAnswer is the error for a 2xx answer that is not what the API defines.
func badAnswer(n Node, op, method, path, want string, body []byte) error {
	return &NodeError{Node: n, Op: op, Err: fmt.Errorf("%s %s: %w: want %s, got %s", method, path, ErrBadAnswer, want, describe(body))}
}

// hasPrefixLine reports whether the body starts with prefix, ignoring
// leading blank space.
func hasPrefixLine(body []byte, prefix string) bool {
	return strings.HasPrefix(string(bytes.TrimLeft(body[:min(len(body), 256)], " \t\r\n")), prefix)
}

// missingRouteHint says, for a 404 on a route heapproxy calls, which
// releases of the product have it and what enables it (sources in
// README.md).
func missingRouteHint(k Kind, path string) string {
	switch {
	case k == TiKV && strings.HasPrefix(path, "/debug/pprof/heap"):
		return "TiKV 5.3 to 7.3 (LTS 6.5.x, 7.1.x included) have no HTTP heap profile route (src/server/status_server/mod.rs: " +
			"commented out in v5.3.0, back in v7.4.0): upgrade to 7.4 (samples for a window) or 7.5+ (dumps at once, " +
			"switched by memory.enable-heap-profiling), or take the dump on the node with jeprof"
	case k == Databend && strings.HasPrefix(path, "/debug/mem/pprof/profile"):
		return "Databend's official builds lack this route: databend-query registers it only when built with the " +
			"memory-profiling cargo feature (#[cfg(feature = \"memory-profiling\")] in " +
			"src/query/service/src/servers/admin/admin_service.rs), which src/binaries/Cargo.toml's default features " +
			"(simd, jemalloc) and the release workflow leave out; the feature also builds jemalloc with profiling. " +
			"Build with cargo build --features memory-profiling and start with MALLOC_CONF=prof:true"
	case k == Go && strings.HasPrefix(path, "/debug/pprof/"):
		return "this port does not serve net/http/pprof: the service must import _ \"net/http/pprof\" on the mux it " +
			"serves here (or register pprof's handlers), and http_port must be that listener's"
	case k == GreptimeDB:
		return "GreptimeDB serves POST /debug/prof/mem from v0.10 (v0.9 and older: /v1/prof/mem), ?output=proto from " +
			"v0.15 and the activate/deactivate/status routes from v0.16.0, on its HTTP port (4000 by default)"
	case k == StarRocks && path == "/pprof/heap":
		return "every StarRocks BE/CN serves /pprof/heap on its http_port (be.conf be_http_port, 8040 by default): is that the port?"
	case k == Doris && strings.HasPrefix(path, "/jeheap/"):
		return "Doris BEs have /jeheap/dump from 1.2.2 and /jeheap/active from 2.1.8/3.0.4 on webserver_port (8040 by default)"
	}
	return ""
}
