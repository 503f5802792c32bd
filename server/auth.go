package server

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

const nativePassword = "mysql_native_password"

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
	caps := uint32(proxyCaps)
	if s.srv.clientTLS != nil {
		caps |= mysql.CLIENT_SSL
	}
	g := &greeting{
		version: s.srv.cfg.ServerVersion,
		connID:  s.id,
		salt:    salt,
		caps:    caps,
		charset: utf8mb4GeneralCI,
		status:  s.status,
		plugin:  nativePassword,
	}
	if err := s.greet(g); err != nil {
		return err
	}
	r, err := s.readHandshakeResponse()
	if err != nil {
		return err
	}
	s.caps = r.caps & caps
	reply := r.auth
	if r.caps&mysql.CLIENT_PLUGIN_AUTH != 0 && r.plugin != "" && r.plugin != nativePassword {
		// The client started with another plugin (caching_sha2_password,
		// client_ed25519): ask it to answer our salt the native way.
		sw := append([]byte{hdrEOF}, nativePassword...)
		sw = append(sw, 0)
		sw = append(sw, salt...)
		sw = append(sw, 0)
		if err := s.client.writePacket(sw); err != nil {
			return err
		}
		if err := s.client.flush(); err != nil {
			return err
		}
		p, err := s.client.readPacket(maxHandshakePacket)
		if err != nil {
			return fmt.Errorf("read auth switch response: %w", err)
		}
		reply = append([]byte(nil), p...)
	}
	if !s.checkLocalPassword(reply, salt) {
		s.sendError(s.accessDenied(len(reply) > 0))
		return errors.New("access denied")
	}
	if s.db != "" {
		if e := s.localUseDB(s.db); e != nil {
			s.sendError(e)
			return fmt.Errorf("unknown database %q", s.db)
		}
	}
	return s.sendOK()
}

func (s *session) checkLocalPassword(reply, salt []byte) bool {
	for _, u := range s.srv.cfg.localUsers() {
		if u.Name != s.user {
			continue
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
	return false
}

// loginUpstream relays authentication to the upstream: heapproxy greets the
// client with the upstream's version and its own salt, forwards the
// client's login naming a plugin the upstream does not know, so the upstream
// answers with an auth switch carrying its own salt, and relays that
// exchange. The client's password is checked by the upstream alone and never
// seen by heapproxy (TiProxy's technique).
func (s *session) loginUpstream(deadline time.Time) error {
	c, err := net.DialTimeout("tcp", s.srv.cfg.Upstream, s.srv.cfg.Timeouts.Connect)
	if err != nil {
		s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, err))
		return fmt.Errorf("dial upstream: %w", err)
	}
	c.SetDeadline(deadline)
	s.up = newPacketConn(c)
	p, err := s.up.readPacket(maxHandshakePacket)
	if err != nil {
		s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, err))
		return fmt.Errorf("read upstream greeting: %w", err)
	}
	if len(p) > 0 && p[0] == hdrErr { // e.g. too many connections, host blocked
		s.client.writePacket(p)
		s.client.flush()
		return fmt.Errorf("upstream refused: %s", parseErrPacket(p).Message)
	}
	ug, err := parseGreeting(p)
	if err != nil {
		s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, err))
		return fmt.Errorf("parse upstream greeting: %w", err)
	}
	caps := ug.caps & proxyCaps
	if s.srv.clientTLS != nil {
		caps |= mysql.CLIENT_SSL
	}
	g := &greeting{
		version: ug.version,
		connID:  ug.connID, // so CONNECTION_ID() and KILL agree with the upstream
		salt:    newSalt(),
		caps:    caps,
		charset: ug.charset,
		status:  ug.status,
		plugin:  nativePassword,
	}
	if err := s.greet(g); err != nil {
		return err
	}
	r, err := s.readHandshakeResponse()
	if err != nil {
		return err
	}
	s.caps = r.caps & caps
	if s.srv.upstreamTLS != nil {
		if ug.caps&mysql.CLIENT_SSL == 0 {
			s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, errors.New("upstream does not offer TLS, upstream_tls is enabled")))
			return errors.New("upstream does not offer TLS")
		}
		if err := s.up.writePacket(sslRequest(s.caps&ug.caps, r.maxPacket, r.charset)); err != nil {
			return err
		}
		if err := s.up.flush(); err != nil {
			return err
		}
		conf := s.srv.upstreamTLS.Clone()
		if conf.ServerName == "" {
			conf.ServerName, _, _ = net.SplitHostPort(s.srv.cfg.Upstream)
		}
		if _, err := s.up.upgrade(func(c net.Conn) *tls.Conn { return tls.Client(c, conf) }); err != nil {
			s.sendError(upstreamUnavailable(s.srv.cfg.Upstream, err))
			return fmt.Errorf("upstream TLS: %w", err)
		}
	}
	fwd := &handshakeResponse{
		caps:      (s.caps & ug.caps) | mysql.CLIENT_PLUGIN_AUTH | mysql.CLIENT_SECURE_CONNECTION,
		maxPacket: r.maxPacket,
		charset:   r.charset,
		user:      r.user,
		auth:      r.auth,
		db:        r.db,
		plugin:    passThroughPlugin,
		attrs:     r.attrs,
	}
	if s.srv.upstreamTLS != nil {
		fwd.caps |= mysql.CLIENT_SSL
	}
	if r.db != "" {
		fwd.caps |= mysql.CLIENT_CONNECT_WITH_DB
	}
	if err := s.up.writePacket(fwd.encode()); err != nil {
		return err
	}
	if err := s.up.flush(); err != nil {
		return err
	}
	return s.relayAuth()
}

// relayAuth relays the authentication exchange until the upstream says OK
// or ERR. After each upstream packet but OK, ERR and caching_sha2's "fast
// auth succeeded", the client answers.
func (s *session) relayAuth() error {
	for {
		head, err := relayPacket(s.client, s.up)
		if err != nil {
			return fmt.Errorf("relay auth from upstream: %w", err)
		}
		if err := s.client.flush(); err != nil {
			return err
		}
		if len(head) == 0 {
			return errors.New("empty packet from upstream during auth")
		}
		switch head[0] {
		case hdrOK:
			s.status = okStatus(head)
			return nil
		case hdrErr:
			return fmt.Errorf("upstream refused login: %s", parseErrPacket(head).Message)
		case hdrAuthMore:
			if len(head) == 2 && head[1] == 3 { // fast auth success: OK follows
				continue
			}
		}
		if _, err := relayPacket(s.up, s.client); err != nil {
			return fmt.Errorf("relay auth from client: %w", err)
		}
		if err := s.up.flush(); err != nil {
			return err
		}
	}
}

func upstreamUnavailable(addr string, err error) *mysql.MyError {
	return &mysql.MyError{Code: mysql.ER_UNKNOWN_ERROR, State: "08S01",
		Message: fmt.Sprintf("heapproxy cannot reach upstream %s: %v", addr, err)}
}
