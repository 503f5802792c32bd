package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// WebAuthenticator checks HTTP basic auth for the web view with the same
// rule as ADMIN EXECUTE: the password is checked where a MySQL login's is
// (heapproxy's user list under auth: local and on the embedded default,
// else by logging in to the upstream), and the account must be in
// profile_users.
type WebAuthenticator struct {
	cfg Config

	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time // upstream logins that passed, by hash of user and password
}

// webAuthTTL is how long an upstream's yes is reused: a browser sends the
// credentials with every request, and each check is a login upstream.
const webAuthTTL = time.Minute

// NewWebAuthenticator checks web view credentials against cfg's users.
func NewWebAuthenticator(cfg Config) *WebAuthenticator {
	return &WebAuthenticator{cfg: cfg, seen: map[[sha256.Size]byte]time.Time{}}
}

// Authenticate reports whether user and password log in to an account in
// profile_users.
func (a *WebAuthenticator) Authenticate(ctx context.Context, user, password string) (bool, error) {
	if a.cfg.embedded() || a.cfg.Auth == AuthLocal {
		u := a.cfg.localUser(user)
		if u == nil {
			return false, nil
		}
		want, err := u.stage2()
		if err != nil {
			return false, err
		}
		got := mysql.NativePasswordHash([]byte(password))
		if want == nil {
			got, want = []byte{byte(len(password))}, []byte{0}
		}
		if subtle.ConstantTimeCompare(got, want) != 1 {
			return false, nil
		}
		return a.cfg.MayProfile(Account{User: user, Known: true}), nil
	}
	key := sha256.Sum256([]byte(user + "\x00" + password))
	a.mu.Lock()
	at, ok := a.seen[key]
	a.mu.Unlock()
	if ok && time.Since(at) < webAuthTTL {
		return true, nil
	}
	acct, err := a.upstreamAccount(ctx, user, password)
	if err != nil {
		if me, ok := err.(*mysql.MyError); ok && me.Code == mysql.ER_ACCESS_DENIED_ERROR {
			return false, nil
		}
		return false, fmt.Errorf("check web login upstream at %s: %w", a.cfg.Upstream, err)
	}
	if !a.cfg.MayProfile(acct) {
		return false, nil
	}
	a.mu.Lock()
	for k, t := range a.seen { // keep the map small
		if time.Since(t) >= webAuthTTL {
			delete(a.seen, k)
		}
	}
	a.seen[key] = time.Now()
	a.mu.Unlock()
	return true, nil
}

// upstreamAccount logs in to the upstream and asks which account it
// authenticated.
func (a *WebAuthenticator) upstreamAccount(ctx context.Context, user, password string) (Account, error) {
	timeout := a.cfg.Timeouts.Connect
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	c, err := client.ConnectWithContext(ctx, a.cfg.Upstream, user, password, "", timeout)
	if err != nil {
		return Account{}, unwrapMyError(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	r, err := c.Execute("SELECT CURRENT_USER()")
	if err != nil {
		return Account{}, err
	}
	defer r.Close()
	cell, err := r.GetString(0, 0)
	if err != nil {
		return Account{}, err
	}
	return parseAccount(cell)
}

// unwrapMyError finds the server's error packet in a client error.
func unwrapMyError(err error) error {
	for e := err; e != nil; {
		if me, ok := e.(*mysql.MyError); ok {
			return me
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return err
}
