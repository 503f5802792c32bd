package server

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// feLogin stands in for an FE's login: no FE can run here (Java builds
// from Maven Central). By default StarRocks', with COM_CHANGE_USER, as
// fe-core mysql/MysqlProto.java does them at tag 3.3.9 (dfae8f9f), the
// same in every 2.5.x to 3.3.9 and 3.4.0 release:
//   - negotiate: a login naming a plugin other than mysql_native_password
//     and mysql_clear_password gets an auth switch to mysql_native_password
//     with the greeting's salt (MysqlHandshakePacket.buildAuthSwitchRequest),
//     and the answer is checked against that salt;
//   - an LDAP user's answer is taken as the clear-text password, less a
//     trailing NUL (authentication/LDAPAuthProviderForNative.java);
//   - changeUser checks COM_CHANGE_USER against the greeting's salt, with
//     no auth switch.
//
// With doris, the greeting has the capabilities Doris 2.0 and later
// advertise (MysqlCapability.DEFAULT_CAPABILITY: no
// CLIENT_MULTI_STATEMENTS), and an LDAP user's login is Doris' at master
// 67714700 (the same on 1.2 to 2.1): whatever the client's plugin, an auth switch to
// mysql_clear_password with empty data (mysql/MysqlAuthSwitchPacket.java),
// whose answer is read up to a NUL (mysql/MysqlClearTextPacket.java,
// MysqlProto.readNulTerminateString, which throws on an answer without
// one: the connection ends).
//
// Every query is answered with CURRENT_USER() as the FE writes it.
type feLogin struct {
	native map[string]string // user -> mysql_native_password password
	ldap   map[string]string // user -> LDAP password
	doris  bool
	logins chan<- uint32 // when set, receives each login's capability flags
}

func (f *feLogin) serve(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for id := uint32(1); ; id++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.session(c, id)
		}
	}()
	return ln.Addr().String()
}

func (f *feLogin) session(c net.Conn, id uint32) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	w := mysqlwire.NewConn(c)
	salt := []byte("StarRocksSaltLetters") // letters only, as MysqlPassword.createRandomString
	caps := uint32(gomysql.CLIENT_PROTOCOL_41 | gomysql.CLIENT_CONNECT_WITH_DB | gomysql.CLIENT_SECURE_CONNECTION |
		gomysql.CLIENT_PLUGIN_AUTH | gomysql.CLIENT_LONG_FLAG | gomysql.CLIENT_CONNECT_ATTRS |
		gomysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) // MysqlCapability.DEFAULT_FLAGS
	if f.doris {
		caps = gomysql.CLIENT_PROTOCOL_41 | gomysql.CLIENT_CONNECT_WITH_DB | gomysql.CLIENT_SECURE_CONNECTION |
			gomysql.CLIENT_PLUGIN_AUTH | gomysql.CLIENT_LONG_FLAG | gomysql.CLIENT_LOCAL_FILES
	}
	g := &mysqlwire.Greeting{Version: "8.0.33", ConnID: id, Salt: salt, Caps: caps, Charset: 33, Plugin: nativePassword}
	send := func(p []byte) bool { return w.WritePacket(p) == nil && w.Flush() == nil }
	if !send(g.Encode()) {
		return
	}
	p, err := w.ReadPacket(1 << 20)
	if err != nil {
		return
	}
	r, err := mysqlwire.ParseHandshakeResponse(p)
	if err != nil {
		return
	}
	if f.logins != nil {
		f.logins <- r.Caps
	}
	auth := r.Auth
	if _, ldap := f.ldap[r.User]; ldap && f.doris {
		if !send([]byte("\xfemysql_clear_password\x00\x00")) {
			return
		}
		if auth, err = w.ReadPacket(1 << 20); err != nil {
			return
		}
		if len(auth) == 0 || auth[len(auth)-1] != 0 {
			return // BufferUnderflowException
		}
	} else if r.Plugin != "" && r.Plugin != nativePassword && r.Plugin != "mysql_clear_password" {
		sw := append([]byte{mysqlwire.HdrEOF}, nativePassword+"\x00"...)
		sw = append(append(sw, salt...), 0)
		if !send(sw) {
			return
		}
		if auth, err = w.ReadPacket(1 << 20); err != nil {
			return
		}
	}
	denied := func(user string) []byte {
		return mysqlwire.ErrPacket(&gomysql.MyError{Code: 1045, State: "28000",
			Message: fmt.Sprintf("Access denied for user '%s' (using password: YES)", user)})
	}
	user := r.User
	if !f.check(user, auth, salt) {
		send(denied(user))
		return
	}
	if !send(mysqlwire.OKPacket(0, 0, gomysql.SERVER_STATUS_AUTOCOMMIT, 0)) {
		return
	}
	for {
		w.ResetSeq()
		p, err := w.ReadPacket(1 << 20)
		if err != nil || len(p) == 0 {
			return
		}
		switch p[0] {
		case gomysql.COM_QUIT:
			return
		case gomysql.COM_CHANGE_USER:
			cu, err := mysqlwire.ParseChangeUser(p, r.Caps&caps)
			if err != nil || !f.check(cu.User, cu.Auth, salt) {
				send(denied(cu.User))
				continue // the FE keeps the session and its previous user
			}
			user = cu.User
			send(mysqlwire.OKPacket(0, 0, gomysql.SERVER_STATUS_AUTOCOMMIT, 0))
		case gomysql.COM_QUERY:
			rw, err := mysqlwire.StartResult(w, gomysql.SERVER_STATUS_AUTOCOMMIT, mysqlwire.TextColumn("CURRENT_USER()"))
			if err != nil || rw.WriteRow(mysqlwire.Str(fmt.Sprintf("'%s'@'%%'", user))) != nil || rw.Finish() != nil {
				return
			}
		default:
			send(mysqlwire.OKPacket(0, 0, gomysql.SERVER_STATUS_AUTOCOMMIT, 0))
		}
	}
}

// check is MysqlProto.authenticate for the two kinds of user.
func (f *feLogin) check(user string, auth, salt []byte) bool {
	if pw, ok := f.native[user]; ok {
		return bytes.Equal(auth, gomysql.CalcNativePassword(salt, []byte(pw)))
	}
	if pw, ok := f.ldap[user]; ok {
		return len(auth) > 0 && string(bytes.TrimSuffix(auth, []byte{0})) == pw
	}
	return false
}

// In front of a StarRocks FE up to 3.3.9 and 3.4.0, an LDAP user logging in
// with mysql_clear_password (StarRocks' documented way:
// `--default-auth mysql_clear_password --enable-cleartext-plugin`) and a
// COM_CHANGE_USER get the FE's answer as they do directly.
func TestLoginInFrontOfStarRocksFE(t *testing.T) {
	fe := (&feLogin{native: map[string]string{"root": "rootpw", "ops": "opspw"}, ldap: map[string]string{"alice": "ldappw"}}).serve(t)
	srv := startProxy(t, Config{Upstream: fe})
	for _, target := range []struct{ name, addr string }{{"direct", fe}, {"through heapproxy", srv.Addr().String()}} {
		h, p, _ := net.SplitHostPort(target.addr)
		t.Run(target.name, func(t *testing.T) {
			for _, c := range []struct {
				name, user, password string
				args                 []string
				want                 string
			}{
				{"native", "ops", "opspw", nil, "'ops'@'%'"},
				{"LDAP, clear text in the first packet", "alice", "ldappw",
					[]string{"--default-auth=mysql_clear_password"}, "'alice'@'%'"},
				{"LDAP, wrong password", "alice", "nope",
					[]string{"--default-auth=mysql_clear_password"}, "ERROR 1045 (28000)"},
				{"native, wrong password", "ops", "nope", nil, "ERROR 1045 (28000)"},
			} {
				args := append([]string{"--connect-timeout=10", "-N", "-e", "SELECT CURRENT_USER()"}, c.args...)
				out, err := cli(t, h, p, c.user, c.password, args...)
				if strings.HasPrefix(c.want, "ERROR") {
					if err == nil || !strings.Contains(out, c.want) {
						t.Errorf("%s: want %s, got %v\n%s", c.name, c.want, err, out)
					}
					continue
				}
				if err != nil || strings.TrimSpace(out) != c.want {
					t.Errorf("%s: want %s, got %v\n%s", c.name, c.want, err, out)
				}
			}
			// COM_CHANGE_USER, answered against the greeting's salt: the FE
			// does no auth switch. MySQLdb (MariaDB Connector/C) and PHP's
			// mysqli (mysqlnd).
			for _, c := range []struct{ name, bin, script string }{
				{"MySQLdb", "/usr/bin/python3", fmt.Sprintf(`
import MySQLdb
c = MySQLdb.connect(host=%q, port=%s, user="ops", passwd="opspw", connect_timeout=10)
c.change_user("root", "rootpw")
cur = c.cursor(); cur.execute("SELECT CURRENT_USER()"); print(cur.fetchone()[0])
try:
    c.change_user("ops", "wrong")
    print("changed")
except MySQLdb.OperationalError as e:
    print("refused", e.args[0])
`, h, p)},
				{"mysqli", "php", fmt.Sprintf(`
mysqli_report(MYSQLI_REPORT_OFF);
$c = new mysqli(%q, "ops", "opspw", "", %s);
if (!$c->change_user("root", "rootpw", null)) { echo "refused ", $c->errno, "\n"; exit; }
echo $c->query("SELECT CURRENT_USER()")->fetch_row()[0], "\n";
echo $c->change_user("ops", "wrong", null) ? "changed\n" : "refused " . $c->errno . "\n";
`, h, p)},
			} {
				flag := "-c"
				if c.bin == "php" {
					flag = "-r"
				}
				out, err := exec.Command(c.bin, flag, c.script).CombinedOutput()
				if want := "'root'@'%'\nrefused 1045\n"; err != nil || string(out) != want {
					t.Errorf("COM_CHANGE_USER from %s: want %q, got %v %q", c.name, want, err, out)
				}
			}
		})
	}
}

// The web view checks a Doris LDAP user's login by logging in upstream, and
// Doris reads the clear-text answer up to a NUL, which MariaDB's and MySQL's
// clients send, and go-mysql's client, which the web view used until
// 2026-11-25, sent too: heapproxy's own login must keep it.
func TestDorisLDAPWebLogin(t *testing.T) {
	fe := (&feLogin{native: map[string]string{"root": "rootpw"}, ldap: map[string]string{"alice": "ldappw"}, doris: true}).serve(t)
	h, p, _ := net.SplitHostPort(fe)
	// The stand-in answers the mariadb CLI as Doris answers it.
	if out, err := cli(t, h, p, "alice", "ldappw", "--connect-timeout=10", "-N", "-e", "SELECT CURRENT_USER()"); err != nil || strings.TrimSpace(out) != "'alice'@'%'" {
		t.Fatalf("mariadb CLI to the Doris stand-in: %v %q", err, out)
	}
	a, err := NewWebAuthenticator(Config{Upstream: fe, ProfileUsers: []string{"alice", "root"}, Timeouts: DefaultConfig().Timeouts})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, password string
		want           bool
	}{{"alice", "ldappw", true}, {"alice", "nope", false}, {"root", "rootpw", true}} {
		if ok, err := a.Authenticate(context.Background(), c.user, c.password); ok != c.want || err != nil {
			t.Errorf("web login %s/%s: %v %v, want %v", c.user, c.password, ok, err, c.want)
		}
	}
	// And through heapproxy, a session of the same user.
	srv := startProxy(t, Config{Upstream: fe})
	ph, pp := hostPort(srv)
	if out, err := cli(t, ph, pp, "alice", "ldappw", "--connect-timeout=10", "-N", "-e", "SELECT CURRENT_USER()"); err != nil || strings.TrimSpace(out) != "'alice'@'%'" {
		t.Fatalf("mariadb CLI through heapproxy to the Doris stand-in: %v %q", err, out)
	}
}
