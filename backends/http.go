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
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
}

func newCaller(client *http.Client, timeout time.Duration, maxBytes int64) *caller {
	if client == nil {
		client = defaultClient()
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	return &caller{client: client, timeout: timeout, maxBytes: maxBytes}
}

// defaultClient talks to nodes directly: no proxy from the environment
// (a node address is not meant for an HTTP proxy) and no redirects (a
// redirect would contact an address nobody registered); a 3xx answer is
// returned as it is, and reported as an error status.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
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
}

// snippet quotes the first bytes of a body for an error message.
func snippet(b []byte) string {
	s := bytes.TrimSpace(b)
	if len(s) > snippetBytes {
		return fmt.Sprintf("%q...", s[:snippetBytes])
	}
	return fmt.Sprintf("%q", s)
}

// statusError is a non-2xx answer.
type statusError struct {
	Method, Path string
	Status       int
	Body         []byte
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if len(bytes.TrimSpace(e.Body)) > 0 {
		msg += ": " + snippet(e.Body)
	}
	if e.Status == http.StatusUnauthorized {
		msg += " (the node wants HTTP basic auth, as a Doris BE with enable_all_http_auth=true does: " +
			"configure the node's HTTP user and password)"
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
	req, err := http.NewRequestWithContext(ctx, method, n.BaseURL()+path, rd)
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
	return answer{status: resp.StatusCode, body: data}, nil
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
		return nil, &NodeError{Node: n, Op: op, Err: &statusError{Method: method, Path: path, Status: a.status, Body: a.body}}
	}
	return a.body, nil
}

// badAnswer is the error for a 2xx answer that is not what the API defines.
func badAnswer(n Node, op, method, path, want string, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return &NodeError{Node: n, Op: op, Err: fmt.Errorf("%s %s: %w: empty answer, want %s", method, path, ErrBadAnswer, want)}
	}
	return &NodeError{Node: n, Op: op, Err: fmt.Errorf("%s %s: %w: want %s, got %s", method, path, ErrBadAnswer, want, snippet(body))}
}

// hasPrefixLine reports whether the body starts with prefix, ignoring
// leading blank space.
func hasPrefixLine(body []byte, prefix string) bool {
	return strings.HasPrefix(string(bytes.TrimLeft(body[:min(len(body), 256)], " \t\r\n")), prefix)
}
