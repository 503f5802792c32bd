package server

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// caching_sha2_password (MySQL 8's default plugin) ends a login it cannot
// settle from its cache with "perform full authentication", after which
// the client sends the password itself: in clear when its connection is
// secure (TLS), otherwise RSA-encrypted with the server's public key,
// which it may first ask for with 0x02. The server reads the answer by the
// security of its own connection (mysql/mysql-server
// sql/auth/sha2_password.cc, caching_sha2_password_authenticate, 8.0 at
// 9cb1b994). Relayed unchanged through heapproxy that only works when both
// of heapproxy's connections are TLS or both plain: a TLS client's clear
// text reached a plain upstream, in clear, which refused it; a plain
// client's key request reached a TLS upstream as its password.
const (
	cachingSHA2Password = "caching_sha2_password"
	sha2FastAuthOK      = 3
	sha2FullAuth        = 4
	sha2RequestKey      = 2
)

// isSHA2FullAuth says whether an upstream packet during login is
// caching_sha2_password's "perform full authentication".
func isSHA2FullAuth(p []byte) bool {
	return len(p) == 2 && p[0] == mysqlwire.HdrAuthMore && p[1] == sha2FullAuth
}

// bridgeSHA2FullAuth answers caching_sha2_password's full authentication
// when the client's connection and the upstream's differ in security
// (relayAuth has just relayed the upstream's request to the client; salt
// is the challenge of the exchange). It reads the client's password as the
// client sends it on its side and gives it to the upstream as the upstream
// expects it on its side: RSA-encrypted with the upstream's key when the
// upstream connection is plain (the password never crosses it in clear),
// in clear over upstream TLS after taking it RSA-encrypted with
// heapproxy's own key from a plain client. It reports false, having read
// nothing, when both connections are alike and the exchange relays as it
// is.
func (s *session) bridgeSHA2FullAuth(salt []byte) (bool, error) {
	_, clientTLS := s.client.NetConn().(*tls.Conn)
	upstreamTLS := s.srv.upstreamTLS != nil
	if clientTLS == upstreamTLS || len(salt) == 0 {
		return false, nil
	}
	p, err := s.client.ReadPacket(maxHandshakePacket)
	if err != nil {
		return true, fmt.Errorf("read client's password for caching_sha2_password: %w", err)
	}
	if clientTLS {
		password, _, _ := bytes.Cut(p, []byte{0})
		return true, s.sendPasswordRSA(string(password), salt)
	}
	key, err := s.srv.authKey()
	if err != nil {
		return true, fmt.Errorf("RSA key for caching_sha2_password: %w", err)
	}
	if len(p) == 1 && p[0] == sha2RequestKey {
		der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			return true, err
		}
		keyPacket := append([]byte{mysqlwire.HdrAuthMore}, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
		if err := s.client.WritePacket(keyPacket); err != nil {
			return true, err
		}
		if err := s.client.Flush(); err != nil {
			return true, err
		}
		if p, err = s.client.ReadPacket(maxHandshakePacket); err != nil {
			return true, fmt.Errorf("read client's encrypted password: %w", err)
		}
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), rand.Reader, key, p, nil)
	if err != nil {
		s.sendError(mysql.NewError(mysql.ER_ACCESS_DENIED_ERROR, fmt.Sprintf("Access denied for user '%s': "+
			"the client encrypted its password with a public key heapproxy does not hold (caching_sha2_password "+
			"over a plain connection to heapproxy, TLS to the upstream); let the client ask for the server's key "+
			"(--get-server-public-key, allowPublicKeyRetrieval) or connect to heapproxy with TLS", s.user)))
		return true, fmt.Errorf("decrypt client's caching_sha2_password answer: %w", err)
	}
	for i := range plain {
		plain[i] ^= salt[i%len(salt)]
	}
	password, _, _ := bytes.Cut(plain, []byte{0})
	if err := s.up.WritePacket(append(password, 0)); err != nil {
		return true, err
	}
	return true, s.up.Flush()
}

// sendPasswordRSA gives the upstream, over a plain connection, the
// password of caching_sha2_password's full authentication: it asks for the
// upstream's public key and sends the password encrypted with it, as a
// client does (mysql --get-server-public-key).
func (s *session) sendPasswordRSA(password string, salt []byte) error {
	if err := s.up.WritePacket([]byte{sha2RequestKey}); err != nil {
		return err
	}
	if err := s.up.Flush(); err != nil {
		return err
	}
	p, err := s.up.ReadPacket(maxHandshakePacket)
	if err != nil {
		return fmt.Errorf("read upstream's public key: %w", err)
	}
	if len(p) > 0 && p[0] == mysqlwire.HdrErr {
		err := mysqlwire.ParseErrPacket(p)
		s.sendError(err)
		return fmt.Errorf("upstream refused the key request: %w", err)
	}
	enc, err := encryptPassword(p, password, salt)
	if err != nil {
		return err
	}
	if err := s.up.WritePacket(enc); err != nil {
		return err
	}
	return s.up.Flush()
}

// encryptPassword answers an upstream's public key packet (0x01, then the
// key in PEM) with the password XORed with salt and RSA-encrypted, as
// caching_sha2_password takes it over a plain connection.
func encryptPassword(keyPacket []byte, password string, salt []byte) ([]byte, error) {
	if len(keyPacket) == 0 || keyPacket[0] != mysqlwire.HdrAuthMore {
		return nil, errors.New("upstream sent no public key")
	}
	block, _ := pem.Decode(keyPacket[1:])
	if block == nil {
		return nil, errors.New("upstream sent no PEM public key")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("upstream public key: %w", err)
	}
	rsaKey, ok := key.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("upstream public key is %T, not RSA", key)
	}
	return mysql.EncryptPassword(password, salt, rsaKey)
}
