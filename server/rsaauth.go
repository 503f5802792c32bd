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

// MySQL's RSA password plugins take the password itself from the client:
// caching_sha2_password (MySQL 8's default) after "perform full
// authentication", on a login its cache cannot settle, and
// sha256_password as its first answer. The client sends it by the
// security of its own connection, in clear over TLS, otherwise
// RSA-encrypted with the server's public key, which it may first ask for
// (0x02 and 0x01); the server reads it by the security of its own
// (mysql/mysql-server sql/auth/sha2_password.cc,
// caching_sha2_password_authenticate, 8.0 at 9cb1b994;
// sql/auth/sql_authentication.cc, sha256_password_authenticate, read in a
// 5.7-era copy). Relayed unchanged through heapproxy that works only when
// both of heapproxy's connections are TLS or both plain: a TLS client's
// clear text reached a plain upstream, in clear, which refused it; a plain
// client's key request reached a TLS upstream as its password.
const (
	cachingSHA2Password = "caching_sha2_password"
	sha256Password      = "sha256_password"
	sha2FastAuthOK      = 3
	sha2FullAuth        = 4
	sha2RequestKey      = 2 // caching_sha2_password's "send me your key"
	sha256RequestKey    = 1 // sha256_password's
)

// isSHA2FullAuth says whether an upstream packet during login is
// caching_sha2_password's "perform full authentication".
func isSHA2FullAuth(p []byte) bool {
	return len(p) == 2 && p[0] == mysqlwire.HdrAuthMore && p[1] == sha2FullAuth
}

// isSHA2FastAuthOK says whether an upstream packet during login is
// caching_sha2_password's "fast authentication succeeded" (OK follows).
func isSHA2FastAuthOK(p []byte) bool {
	return len(p) == 2 && p[0] == mysqlwire.HdrAuthMore && p[1] == sha2FastAuthOK
}

// mixedTLS says whether the client's connection is TLS and whether it
// differs in that from the upstream's: then the RSA password plugins'
// answers are bridged, not relayed.
func (s *session) mixedTLS() (clientTLS, mixed bool) {
	_, clientTLS = s.client.NetConn().(*tls.Conn)
	return clientTLS, clientTLS != (s.srv.upstreamTLS != nil)
}

// bridgePassword answers, when the client's connection and the
// upstream's differ in security, the step of an RSA password plugin in
// which the client sends its password: relayAuth has just relayed the
// upstream's request for it, salt is the exchange's challenge, keyRequest
// the plugin's byte asking for the server's key. It reads the password as
// the client sends it on its side and gives it to the upstream as the
// upstream expects it on its side. It reports false, having read nothing,
// when both connections are alike and the exchange relays as it is.
func (s *session) bridgePassword(salt []byte, keyRequest byte) (bool, error) {
	clientTLS, mixed := s.mixedTLS()
	if !mixed || len(salt) == 0 {
		return false, nil
	}
	answer, err := s.client.ReadPacket(maxHandshakePacket)
	if err != nil {
		return true, fmt.Errorf("read client's password: %w", err)
	}
	if isEmptyAnswer(answer) {
		return true, s.sendUpstream(answer)
	}
	password, err := s.clientPassword(answer, salt, keyRequest, clientTLS)
	if err != nil {
		return true, err
	}
	if clientTLS { // the upstream connection is plain
		return true, s.sendPasswordRSA(password, salt, []byte{keyRequest})
	}
	return true, s.sendUpstream(append(password, 0))
}

// isEmptyAnswer is an RSA password plugin's answer for an empty password.
func isEmptyAnswer(p []byte) bool { return len(p) == 0 || len(p) == 1 && p[0] == 0 }

// clientPassword reads the password in a client's answer to an RSA
// password plugin: in clear (NUL-terminated) over TLS; over a plain
// connection encrypted with heapproxy's own key, sent first when the
// client asks for it with keyRequest.
func (s *session) clientPassword(answer, salt []byte, keyRequest byte, clientTLS bool) ([]byte, error) {
	if clientTLS {
		password, _, _ := bytes.Cut(answer, []byte{0})
		return bytes.Clone(password), nil
	}
	key, err := s.srv.authKey()
	if err != nil {
		return nil, fmt.Errorf("heapproxy's RSA key: %w", err)
	}
	if len(answer) == 1 && answer[0] == keyRequest {
		der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			return nil, err
		}
		keyPacket := append([]byte{mysqlwire.HdrAuthMore}, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
		if err := s.client.WritePacket(keyPacket); err != nil {
			return nil, err
		}
		if err := s.client.Flush(); err != nil {
			return nil, err
		}
		if answer, err = s.client.ReadPacket(maxHandshakePacket); err != nil {
			return nil, fmt.Errorf("read client's encrypted password: %w", err)
		}
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), rand.Reader, key, answer, nil)
	if err != nil {
		s.sendError(mysql.NewError(mysql.ER_ACCESS_DENIED_ERROR, fmt.Sprintf("Access denied for user '%s': "+
			"the client encrypted its password with a public key heapproxy does not hold (an RSA password plugin "+
			"over a plain connection to heapproxy, TLS to the upstream); let the client ask for the server's key "+
			"(--get-server-public-key, allowPublicKeyRetrieval) or connect to heapproxy with TLS", s.user)))
		return nil, fmt.Errorf("decrypt client's password: %w", err)
	}
	for i := range plain {
		plain[i] ^= salt[i%len(salt)]
	}
	password, _, _ := bytes.Cut(plain, []byte{0})
	return password, nil
}

// sendUpstream sends one packet to the upstream.
func (s *session) sendUpstream(p []byte) error {
	if err := s.up.WritePacket(p); err != nil {
		return err
	}
	return s.up.Flush()
}

// sendPasswordRSA gives the upstream, over a plain connection, the
// password of an RSA password plugin: it sends keyRequest (the packet
// asking for the upstream's public key) and then the password encrypted
// with the key the upstream answers, as a client does (mysql
// --get-server-public-key).
func (s *session) sendPasswordRSA(password []byte, salt, keyRequest []byte) error {
	if err := s.sendUpstream(keyRequest); err != nil {
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
	enc, err := encryptPassword(p, string(password), salt)
	if err != nil {
		return err
	}
	return s.sendUpstream(enc)
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
