package server

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/internal/relay"
)

const (
	nativePassword = "mysql_native_password"
	clearPassword  = "mysql_clear_password"
)

// newSalt returns 20 random bytes without NUL, as servers send them.
func newSalt() []byte {
	b := make([]byte, 20)
	rand.Read(b)
	for i := range b {
		b[i] = b[i]&0x7f | 1 // printable-ish and never NUL, like MySQL's
	}
	return b
}

// loginLocal checks the client against heapproxy's own user list with
// mysql_native_password (the embedded default).
func (s *session) loginLocal() error {
	salt := newSalt()
	s.salt = salt
	caps := uint32(proxyCaps)
	if s.srv.clientTLS != nil {
		caps |= mysql.CLIENT_SSL
	}
	g := &mysqlwire.Greeting{
		Version: s.srv.cfg.ServerVersion,
		ConnID:  s.id,
		Salt:    salt,
		Caps:    caps,
		Charset: mysqlwire.UTF8MB4GeneralCI,
		Status:  s.status,
		Plugin:  nativePassword,
	}
	r, err := s.handshake(g)
	if err != nil {
		return err
	}
	if err := s.checkLocalLogin(r.User, r.Caps, r.Plugin, r.Auth, salt); err != nil {
		return err
	}
	s.account = Account{User: r.User, Known: true}
	// The connection's character sets are the collation the client named
	// (charset.go).
	s.charsets = handshakeCharsets(uint16(r.Charset))
	s.loginCharsets = s.charsets
	if s.db != "" {
		if e := s.localUseDB(s.db); e != nil {
			s.sendError(e)
			return fmt.Errorf("unknown database %q", s.db)
		}
	}
	return s.sendOK()
}

// checkLocalLogin checks a login (or COM_CHANGE_USER) against heapproxy's
// user list, first asking a client that answered with another plugin to
// answer the salt with mysql_native_password. A refusal is sent to the
// client.
func (s *session) checkLocalLogin(user string, caps uint32, plugin string, reply, salt []byte) error {
	if caps&mysql.CLIENT_PLUGIN_AUTH != 0 && plugin != "" && plugin != nativePassword {
		sw := append([]byte{mysqlwire.HdrEOF}, nativePassword...)
		sw = append(sw, 0)
		sw = append(sw, salt...)
		sw = append(sw, 0)
		if err := s.client.WritePacket(sw); err != nil {
			return err
		}
		if err := s.client.Flush(); err != nil {
			return err
		}
		p, err := s.client.ReadPacket(maxHandshakePacket)
		if err != nil {
			return fmt.Errorf("read auth switch response: %w", err)
		}
		reply = append([]byte(nil), p...)
	}
	if !s.checkLocalPassword(user, reply, salt) {
		s.sendError(s.accessDenied(user, len(reply) > 0))
		return errors.New("access denied")
	}
	return nil
}

func (s *session) checkLocalPassword(user string, reply, salt []byte) bool {
	u := s.srv.cfg.localUser(user)
	if u == nil {
		return false
	}
	stage2, err := u.stage2()
	if err != nil {
		return false
	}
	if stage2 == nil {
		return len(reply) == 0
	}
	return len(reply) == 20 && mysql.CompareNativePassword(reply, stage2, salt)
}

// loginUpstream relays authentication to the upstream: heapproxy greets the
// client with the upstream's version and challenge, forwards the client's
// login with the client's own plugin and answer, and relays the rest of the
// exchange. The client's password is checked by the upstream alone.
func (s *session) loginUpstream(deadline time.Time) error {
	c, err := net.DialTimeout("tcp", s.srv.cfg.Upstream, s.srv.cfg.Timeouts.Connect)
	if err != nil {
		s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, err))
		return fmt.Errorf("dial upstream: %w", err)
	}
	c.SetDeadline(deadline)
	s.up = mysqlwire.NewConn(relay.FastConn(c))
	p, err := s.up.ReadPacket(maxHandshakePacket)
	if err != nil {
		s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, err))
		return fmt.Errorf("read upstream greeting: %w", err)
	}
	if len(p) > 0 && p[0] == mysqlwire.HdrErr { // e.g. too many connections, host blocked
		s.client.WritePacket(p)
		s.client.Flush()
		return fmt.Errorf("upstream refused: %s", mysqlwire.ParseErrPacket(p).Message)
	}
	ug, err := mysqlwire.ParseGreeting(p)
	if err != nil {
		s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, err))
		return fmt.Errorf("parse upstream greeting: %w", err)
	}
	s.mu.Lock()
	s.upstreamID, s.upstreamAddr = ug.ConnID, c.RemoteAddr().String()
	s.mu.Unlock()
	caps := ug.Caps & proxyCaps
	if s.srv.clientTLS != nil {
		caps |= mysql.CLIENT_SSL
	}
	// In passthrough the greeting offers the upstream's own challenge, so
	// the client's first answer is one the upstream accepts as if sent to
	// it directly. That is the only way in for logins that must name their
	// plugin in the first packet: StarRocks up to 3.3.9 and 3.4.0 answers
	// any plugin but mysql_native_password and mysql_clear_password with a
	// switch to native, so its LDAP users must send mysql_clear_password
	// and its Kerberos users authentication_kerberos_client at once
	// (fe-core mysql/MysqlProto.java negotiate). StarRocks also checks
	// COM_CHANGE_USER against the greeting's salt with no auth switch
	// (MysqlProto.changeUser), every release to 3.5. Under auth: local
	// heapproxy checks the password itself, against a salt of its own, as
	// it does for an upstream whose salt is not 4.1's 20 bytes.
	s.upstreamSalt = s.srv.cfg.Auth != AuthLocal && len(ug.Salt) == 20
	salt, plugin := newSalt(), nativePassword
	if s.upstreamSalt {
		salt, plugin = ug.Salt, cmp.Or(ug.Plugin, nativePassword)
	}
	s.salt = salt
	g := &mysqlwire.Greeting{
		Version: ug.Version,
		ConnID:  ug.ConnID, // so CONNECTION_ID() and KILL agree with the upstream
		Salt:    salt,
		Caps:    caps,
		Charset: ug.Charset,
		Status:  ug.Status,
		Plugin:  plugin,
	}
	r, err := s.handshake(g)
	if err != nil {
		return err
	}
	var login *User
	if s.srv.cfg.Auth == AuthLocal {
		if err := s.checkLocalLogin(r.User, r.Caps, r.Plugin, r.Auth, salt); err != nil {
			return err
		}
		login = s.srv.cfg.localUser(r.User)
		s.account = Account{User: r.User, Known: true}
	}
	if s.srv.upstreamTLS != nil {
		if err := upgradeUpstreamTLS(s.up, ug, s.caps&ug.Caps, r.MaxPacket, r.Charset, s.srv.upstreamTLS); err != nil {
			s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, err))
			return err
		}
	}
	fwd := &mysqlwire.HandshakeResponse{
		Caps:      (s.caps & ug.Caps) | (r.Caps & clientOnlyCaps) | mysql.CLIENT_PLUGIN_AUTH | mysql.CLIENT_SECURE_CONNECTION,
		MaxPacket: r.MaxPacket,
		Charset:   r.Charset,
		User:      r.User,
		Auth:      r.Auth,
		DB:        r.DB,
		Plugin:    s.upstreamPlugin(r.Plugin),
		Attrs:     r.Attrs,
	}
	if s.srv.upstreamTLS != nil {
		fwd.Caps |= mysql.CLIENT_SSL
	}
	if r.DB != "" {
		fwd.Caps |= mysql.CLIENT_CONNECT_WITH_DB
	}
	if login != nil {
		user, password := login.upstreamAccount()
		auth, err := scramble(ug.Plugin, ug.Salt, password)
		if err != nil {
			return err
		}
		fwd.User, fwd.Plugin, fwd.Auth = user, ug.Plugin, auth
		return s.authAs(fwd.Encode(), user, password, ug.Salt)
	}
	if err := s.forwardLogin(fwd, s.upstreamChallenge()); err != nil {
		return err
	}
	if err := s.relayAuth(fwd.Plugin, s.upstreamChallenge()); err != nil {
		return err
	}
	s.learnAccount()
	return nil
}

// forwardLogin sends the upstream the client's login. A sha256_password
// login carries the password itself (RSA password plugins, rsaauth.go): when
// one of heapproxy's connections is TLS and the other plain it is taken
// from the client as the client's connection allows and given to the
// upstream as the upstream's expects. salt is the upstream's challenge
// the client answered (nil when it answered heapproxy's).
func (s *session) forwardLogin(fwd *mysqlwire.HandshakeResponse, salt []byte) error {
	clientTLS, mixed := s.mixedTLS()
	if fwd.Plugin != sha256Password || !mixed || len(salt) == 0 || isEmptyAnswer(fwd.Auth) {
		return s.sendUpstream(fwd.Encode())
	}
	password, err := s.clientPassword(fwd.Auth, salt, sha256RequestKey, clientTLS)
	if err != nil {
		return err
	}
	if clientTLS { // the upstream connection is plain: ask for its key in the login
		fwd.Auth = []byte{sha256RequestKey}
		return s.sendPasswordRSA(password, salt, fwd.Encode())
	}
	fwd.Auth = append(password, 0)
	return s.sendUpstream(fwd.Encode())
}

// upstreamChallenge is the upstream's challenge a client's login and
// COM_CHANGE_USER answer, or nil when they answer heapproxy's own.
func (s *session) upstreamChallenge() []byte {
	if s.upstreamSalt {
		return s.salt
	}
	return nil
}

// upstreamPlugin is the plugin heapproxy names upstream for a login (or
// COM_CHANGE_USER) whose client named plugin. A client that answered the
// upstream's own salt is forwarded as it is. One that answered
// heapproxy's salt (a pre-4.1 upstream with a short salt) is forwarded
// naming a plugin no server implements, so the upstream answers with an
// auth switch carrying its challenge, which the client then answers
// (pingcap/tiproxy's technique).
func (s *session) upstreamPlugin(plugin string) string {
	switch {
	case !s.upstreamSalt:
		return passThroughPlugin
	case plugin == "":
		return nativePassword // what a server takes a client without plugin auth to answer
	}
	return plugin
}

// learnAccount asks the upstream which account it authenticated
// (CURRENT_USER()), once after each login, so that profile_users is
// checked against it and not against the name the client typed: MariaDB's
// anonymous account accepts any name. A session whose account cannot be
// learned may not profile.
func (s *session) learnAccount() {
	s.account = Account{}
	cell, err := queryCell(s.up, "SELECT CURRENT_USER()")
	if err != nil {
		s.log.Warn("cannot learn the upstream account; the session may not profile", zap.Error(err))
		return
	}
	a, err := parseAccount(cell)
	if err != nil {
		s.log.Warn("unexpected CURRENT_USER() from upstream; the session may not profile", zap.String("current_user", cell))
		return
	}
	s.account = a
}

// queryCell runs heapproxy's own query on an upstream connection (a
// session's before the client's first command: nothing reaches the client)
// and returns the first column of its first row.
func queryCell(up *mysqlwire.Conn, query string) (string, error) {
	up.ResetSeq()
	if err := up.WritePacket(append([]byte{mysql.COM_QUERY}, query...)); err != nil {
		return "", err
	}
	if err := up.Flush(); err != nil {
		return "", err
	}
	p, err := up.ReadPacket(mysqlwire.InspectLimit)
	switch {
	case err != nil:
		return "", err
	case len(p) == 0 || p[0] == mysqlwire.HdrOK:
		return "", fmt.Errorf("%s: no result set", query)
	case p[0] == mysqlwire.HdrErr:
		return "", fmt.Errorf("%s: %w", query, mysqlwire.ParseErrPacket(p))
	}
	for { // column definitions up to EOF
		if p, err = up.ReadPacket(mysqlwire.InspectLimit); err != nil {
			return "", err
		}
		if mysqlwire.EndsRows(p) {
			break
		}
	}
	if !mysqlwire.IsEOF(p) {
		return "", fmt.Errorf("%s: %w", query, mysqlwire.ParseErrPacket(p))
	}
	var cell string
	for rows := 0; ; rows++ {
		if p, err = up.ReadPacket(mysqlwire.InspectLimit); err != nil {
			return "", err
		}
		if mysqlwire.EndsRows(p) {
			break
		}
		if rows == 0 {
			n, null, k := mysqlwire.LenEncInt(p)
			if k == 0 || null || uint64(len(p)-k) < n {
				return "", fmt.Errorf("%s: malformed row", query)
			}
			cell = string(p[k : k+int(n)])
		}
	}
	if !mysqlwire.IsEOF(p) {
		return "", fmt.Errorf("%s: %w", query, mysqlwire.ParseErrPacket(p))
	}
	return cell, nil
}

// authAs logs in to the upstream (first is the login or COM_CHANGE_USER
// packet) with the account configured for a user heapproxy checked itself
// (auth: local), answering the upstream's auth plugin (salt is the
// challenge first answered), and hands the upstream's OK or ERR to the
// client.
func (s *session) authAs(first []byte, user, password string, salt []byte) error {
	if err := s.up.WritePacket(first); err != nil {
		return err
	}
	if err := s.up.Flush(); err != nil {
		return err
	}
	status, err := answerUpstreamAuth(s.up, password, salt, s.srv.upstreamTLS != nil)
	var refused *mysql.MyError
	if errors.As(err, &refused) {
		s.sendError(refused)
		return fmt.Errorf("upstream refused login as %s: %s", user, refused.Message)
	}
	var plugin unanswerablePlugin
	if errors.As(err, &plugin) { // the client hears why, not a lost connection
		s.sendError(mysql.NewError(mysql.ER_NOT_SUPPORTED_AUTH_MODE, err.Error()))
	}
	if err != nil {
		return err
	}
	s.status = status
	return s.sendOK()
}

// answerUpstreamAuth answers the upstream's side of a login heapproxy makes
// itself with password, once its first packet is sent: auth switches and
// caching_sha2's fast and full paths (salt is the challenge the first packet
// answered; overTLS says the connection is encrypted, where caching_sha2
// takes the password itself). It returns the status flags of the
// upstream's OK, or its ERR as a *mysql.MyError.
func answerUpstreamAuth(up *mysqlwire.Conn, password string, salt []byte, overTLS bool) (uint16, error) {
	send := func(p []byte) error {
		if err := up.WritePacket(p); err != nil {
			return err
		}
		return up.Flush()
	}
	for {
		p, err := up.ReadPacket(maxHandshakePacket)
		if err != nil {
			return 0, fmt.Errorf("upstream login: %w", err)
		}
		switch {
		case len(p) == 0:
			return 0, errors.New("empty packet from upstream during login")
		case p[0] == mysqlwire.HdrOK:
			return mysqlwire.OKStatus(p), nil
		case p[0] == mysqlwire.HdrErr:
			return 0, mysqlwire.ParseErrPacket(p)
		case p[0] == mysqlwire.HdrEOF: // auth switch: plugin NUL salt
			rest := p[1:]
			i := bytes.IndexByte(rest, 0)
			if i < 0 {
				return 0, mysqlwire.ErrMalformed
			}
			plugin := string(rest[:i])
			salt = switchSalt(plugin, rest[i+1:])
			auth, serr := scramble(plugin, salt, password)
			if serr != nil {
				return 0, serr
			}
			err = send(auth)
		case isSHA2FastAuthOK(p): // OK follows
		case isSHA2FullAuth(p):
			if overTLS {
				err = send(append([]byte(password), 0))
			} else {
				err = send([]byte{sha2RequestKey})
			}
		case p[0] == mysqlwire.HdrAuthMore: // the RSA public key
			var enc []byte
			if enc, err = encryptPassword(p, password, salt); err == nil {
				err = send(enc)
			}
		default:
			return 0, fmt.Errorf("unexpected packet 0x%02x during upstream login", p[0])
		}
		if err != nil {
			return 0, err
		}
	}
}

// upgradeUpstreamTLS asks the upstream ug greeted on up for TLS and
// upgrades to it with conf (Config.UpstreamClientTLS).
func upgradeUpstreamTLS(up *mysqlwire.Conn, ug *mysqlwire.Greeting, caps, maxPacket uint32, charset uint8, conf *tls.Config) error {
	if ug.Caps&mysql.CLIENT_SSL == 0 {
		return errors.New("upstream does not offer TLS, upstream_tls is enabled")
	}
	if err := up.WritePacket(mysqlwire.SSLRequest(caps, maxPacket, charset)); err != nil {
		return err
	}
	if err := up.Flush(); err != nil {
		return err
	}
	if _, err := up.Upgrade(func(c net.Conn) *tls.Conn { return tls.Client(c, conf) }); err != nil {
		return fmt.Errorf("upstream TLS: %w", err)
	}
	return nil
}

// switchSalt is the challenge in an auth switch request. The native and
// caching_sha2 plugins end their 20-byte salt with a NUL; client_ed25519
// sends exactly 32 random bytes, which end in 0 one time in 256, so
// nothing may be cut from them.
func switchSalt(plugin string, data []byte) []byte {
	if plugin == "client_ed25519" {
		return data
	}
	return bytes.TrimSuffix(data, []byte{0})
}

// scramble answers an auth plugin's challenge with the password.
func scramble(plugin string, salt []byte, password string) ([]byte, error) {
	switch plugin {
	case "", nativePassword:
		return mysql.CalcNativePassword(salt, []byte(password)), nil
	case "caching_sha2_password":
		return mysql.CalcCachingSha2Password(salt, []byte(password)), nil
	case "client_ed25519":
		return mysql.CalcEd25519Password(salt, password)
	case clearPassword: // NUL-terminated, as MariaDB's and MySQL's clients send it (Doris reads up to the NUL)
		return append([]byte(password), 0), nil
	}
	return nil, unanswerablePlugin(plugin)
}

// unanswerablePlugin is an auth plugin an upstream asked heapproxy's own
// login for that heapproxy has no answer to.
type unanswerablePlugin string

func (p unanswerablePlugin) Error() string {
	return fmt.Sprintf("upstream asks for auth plugin %q, which heapproxy cannot answer for a local user; use auth: passthrough or an upstream account with a password plugin", string(p))
}

// relayAuth relays the authentication exchange until the upstream says OK
// or ERR. After each upstream packet but OK, ERR and caching_sha2's "fast
// auth succeeded", the client answers; the password an RSA password plugin
// asks for is bridged where the client's connection and the upstream's
// differ in security (bridgePassword). plugin and salt are what the client's
// first answer answered (salt nil when it was not the upstream's
// challenge); an auth switch replaces them.
func (s *session) relayAuth(plugin string, salt []byte) error {
	for {
		head, err := mysqlwire.RelayPacket(s.client, s.up)
		if err != nil {
			return fmt.Errorf("relay auth from upstream: %w", err)
		}
		if err := s.client.Flush(); err != nil {
			return err
		}
		if len(head) == 0 {
			return errors.New("empty packet from upstream during auth")
		}
		var keyRequest byte // an RSA password plugin asks for the password
		switch head[0] {
		case mysqlwire.HdrOK:
			s.status = mysqlwire.OKStatus(head)
			return nil
		case mysqlwire.HdrErr:
			return fmt.Errorf("upstream refused login: %s", mysqlwire.ParseErrPacket(head).Message)
		case mysqlwire.HdrEOF: // auth switch: plugin NUL salt
			if name, data, ok := bytes.Cut(head[1:], []byte{0}); ok {
				plugin, salt = string(name), bytes.Clone(switchSalt(string(name), data))
			}
			if plugin == sha256Password {
				keyRequest = sha256RequestKey
			}
		case mysqlwire.HdrAuthMore:
			if isSHA2FastAuthOK(head) { // OK follows
				continue
			}
			if isSHA2FullAuth(head) && plugin == cachingSHA2Password {
				keyRequest = sha2RequestKey
			}
		}
		if keyRequest != 0 { // the client's next answer is its password
			bridged, err := s.bridgePassword(salt, keyRequest)
			if err != nil {
				return err
			}
			if bridged {
				continue
			}
		}
		if _, err := mysqlwire.RelayPacket(s.up, s.client); err != nil {
			return fmt.Errorf("relay auth from client: %w", err)
		}
		if err := s.up.Flush(); err != nil {
			return err
		}
	}
}
