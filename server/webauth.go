package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// WebAuthenticator checks HTTP basic auth for the web view with the same
// rule as ADMIN EXECUTE: the password is checked where a MySQL login's is
// (heapproxy's user list under auth: local and on the embedded default,
// else by logging in to the upstream), and the account must be in
// profile_users.
type WebAuthenticator struct {
	cfg Config
	tls *tls.Config // upstream_tls, nil without

	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time // upstream logins that passed, by hash of user and password
}

// webAuthTTL is how long an upstream's yes is reused: a browser sends the
// credentials with every request, and each check is a login upstream.
const webAuthTTL = time.Minute

// NewWebAuthenticator checks web view credentials against cfg's users.
func NewWebAuthenticator(cfg Config) (*WebAuthenticator, error) {
	conf, err := cfg.UpstreamClientTLS()
	if err != nil {
		return nil, err
	}
	return &WebAuthenticator{cfg: cfg, tls: conf, seen: map[[sha256.Size]byte]time.Time{}}, nil
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

// upstreamAccount logs in to the upstream as user and asks which account
// it authenticated. The login is heapproxy's own, as under auth: local
// (answerUpstreamAuth): over upstream_tls when it is set, and answering
// whatever plugin the upstream switches to, clear text included (a Doris or
// MariaDB PAM/LDAP user).
func (a *WebAuthenticator) upstreamAccount(ctx context.Context, user, password string) (Account, error) {
	timeout := a.cfg.Timeouts.Connect
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	c, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, "tcp", a.cfg.Upstream)
	if err != nil {
		return Account{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	up := mysqlwire.NewConn(c)
	p, err := up.ReadPacket(maxHandshakePacket)
	if err != nil {
		return Account{}, fmt.Errorf("read greeting: %w", err)
	}
	if len(p) > 0 && p[0] == mysqlwire.HdrErr {
		return Account{}, mysqlwire.ParseErrPacket(p)
	}
	ug, err := mysqlwire.ParseGreeting(p)
	if err != nil {
		return Account{}, fmt.Errorf("parse greeting: %w", err)
	}
	const caps = mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_SECURE_CONNECTION | mysql.CLIENT_PLUGIN_AUTH |
		mysql.CLIENT_LONG_PASSWORD | mysql.CLIENT_TRANSACTIONS | mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
	r := &mysqlwire.HandshakeResponse{Caps: caps & ug.Caps, MaxPacket: 1 << 24, Charset: mysqlwire.UTF8MB4GeneralCI, User: user}
	if a.tls != nil {
		if err := upgradeUpstreamTLS(up, ug, r.Caps, r.MaxPacket, r.Charset, a.tls); err != nil {
			return Account{}, err
		}
		r.Caps |= mysql.CLIENT_SSL
	}
	// Answer the greeting's plugin if heapproxy can; else native, which
	// the upstream switches from.
	r.Plugin = cmp.Or(ug.Plugin, nativePassword)
	if r.Auth, err = scramble(r.Plugin, ug.Salt, password); err != nil {
		r.Plugin = nativePassword
		r.Auth = mysql.CalcNativePassword(ug.Salt, []byte(password))
	}
	if err := up.WritePacket(r.Encode()); err != nil {
		return Account{}, err
	}
	if err := up.Flush(); err != nil {
		return Account{}, err
	}
	if _, err := answerUpstreamAuth(up, password, ug.Salt, a.tls != nil); err != nil {
		return Account{}, err
	}
	cell, err := queryCell(up, "SELECT CURRENT_USER()")
	if err != nil {
		return Account{}, err
	}
	return parseAccount(cell)
}
