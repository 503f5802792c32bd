package server

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/profiling"
)

// Config is what heapproxy's front needs; cmd/heapproxy fills it from the
// YAML file and the flags.
type Config struct {
	// Listen is the MySQL-protocol address clients connect to.
	Listen string `yaml:"listen"`
	// Upstream is the database everything not intercepted goes to. Empty
	// selects the embedded default: heapproxy answers alone.
	Upstream string `yaml:"upstream"`
	// Users checked by heapproxy itself. Without an upstream they are the
	// only accounts (default: root with an empty password); with one, they
	// are consulted only with Auth "local".
	Users []User `yaml:"users"`
	// Auth says who checks passwords when there is an upstream:
	// "passthrough" (default: the upstream, heapproxy stores none) or
	// "local" (heapproxy checks Users, then logs in to the upstream with
	// each user's upstream account).
	Auth string `yaml:"auth"`
	// ProfileUsers may run ADMIN EXECUTE HeapProf statements and read
	// profile data and node addresses (see MayProfile for how entries
	// match accounts).
	ProfileUsers []string `yaml:"profile_users"`
	// TLS towards clients, offered when a certificate is configured.
	TLS TLSConfig `yaml:"tls"`
	// UpstreamTLS asks for TLS on the connection to the upstream.
	UpstreamTLS UpstreamTLSConfig `yaml:"upstream_tls"`
	Timeouts    Timeouts          `yaml:"timeouts"`
	// EventLoops is how many threads relay forwarded statements of
	// plain-TCP sessions (see server/loop_linux.go): 0 means one per CPU,
	// a negative number none (each session's goroutine relays them).
	EventLoops int `yaml:"event_loops"`
	// MaxDumps is how many dumps heapproxy works on at once (parse,
	// symbolize with local files, render: the CPU work; fetching from the
	// node and a node's own symbolizer do not hold a slot) across all
	// sessions and schedules; the others wait, within the admin timeout.
	// A dump of a large server holds tens of MB and a core. 0 means one
	// per CPU.
	MaxDumps int `yaml:"max_dumps"`
	// MaxHeldDumps bounds the dumps in memory at once, fetched or being
	// fetched and not yet rendered and stored (profiling/held.go): memory
	// stays within (max_held_dumps + max_dumps) dumps however many nodes
	// a fan-out reaches. A place is taken before the fetch, so more places
	// hide slow nodes at one dump's memory each. 0 means 2 x max_dumps.
	MaxHeldDumps int `yaml:"max_held_dumps"`
	// Schedules are periodic snapshots started with the server, as if
	// schedule_snapshots had been run (which lasts only until a restart).
	Schedules []Schedule `yaml:"schedules"`
	// MaxConnections bounds the client sessions (each may hold an upstream
	// connection and two descriptors); one more is answered ERR 1040, as
	// MySQL does. 0 means defaultMaxConnections.
	MaxConnections int `yaml:"max_connections"`
	// MaxPendingLogins bounds the sessions that hold an upstream
	// connection before their login is done (the upstream's greeting is
	// needed to greet the client, so heapproxy dials it on accept). More
	// wait for a slot within timeouts.handshake, so that silent TCP
	// connections cannot use up the upstream's max_connections. 0 means
	// defaultMaxPendingLogins.
	MaxPendingLogins int `yaml:"max_pending_logins"`
	// ServerVersion is announced in the embedded default; with an upstream
	// the upstream's own version is relayed so drivers detect it.
	ServerVersion string `yaml:"server_version"`
}

// Schedule takes a snapshot of a node every interval.
type Schedule struct {
	Node  int64         `yaml:"node"`
	Every time.Duration `yaml:"every"`
}

// User is one account heapproxy checks itself.
type User struct {
	Name string `yaml:"name"`
	// Password in clear, or PasswordHash as MySQL's mysql_native_password
	// hash ("*" followed by 40 hex digits, as in mysql.user).
	Password     string `yaml:"password"`
	PasswordHash string `yaml:"password_hash"`
	// UpstreamUser and UpstreamPassword are the account heapproxy logs in
	// with for this user under auth: local (default: the same name and
	// Password).
	UpstreamUser     string `yaml:"upstream_user"`
	UpstreamPassword string `yaml:"upstream_password"`
}

// The values of Config.Auth.
const (
	AuthPassThrough = "passthrough"
	AuthLocal       = "local"
)

func (u *User) upstreamAccount() (string, string) {
	name, pw := u.Name, u.Password
	if u.UpstreamUser != "" {
		name = u.UpstreamUser
	}
	if u.UpstreamPassword != "" {
		pw = u.UpstreamPassword
	}
	return name, pw
}

// TLSConfig names the certificate heapproxy presents to clients.
type TLSConfig struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// UpstreamTLSConfig controls TLS from heapproxy to the upstream.
type UpstreamTLSConfig struct {
	Enabled            bool   `yaml:"enabled"`
	CA                 string `yaml:"ca"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// Timeouts bound every wait on a peer.
type Timeouts struct {
	// Connect bounds dialing the upstream.
	Connect time.Duration `yaml:"connect"`
	// Handshake bounds the whole login exchange of a new client.
	Handshake time.Duration `yaml:"handshake"`
	// Idle closes a client that sends nothing for that long (0: never; the
	// upstream's wait_timeout still applies).
	Idle time.Duration `yaml:"idle"`
	// Shutdown is how long running statements may finish after SIGTERM.
	Shutdown time.Duration `yaml:"shutdown"`
	// Admin bounds one ADMIN EXECUTE statement: the node calls (each also
	// bounded by the node timeout), symbolization and rendering.
	Admin time.Duration `yaml:"admin"`
}

// defaultMaxConnections is max_connections when unset. A session takes two
// descriptors (client and upstream), so `ulimit -n` must allow twice as
// many; systemd's default of 524288 does.
const defaultMaxConnections = 4096

// defaultMaxPendingLogins is max_pending_logins when unset: well under
// MariaDB's and MySQL's default max_connections (151), and far more
// than the logins a pool opens at once.
const defaultMaxPendingLogins = 32

// DefaultConfig is the embedded default.
func DefaultConfig() Config {
	return Config{
		Listen:        "127.0.0.1:9030",
		ProfileUsers:  []string{"root"},
		ServerVersion: "8.0.33-heapproxy",
		Timeouts: Timeouts{
			Connect:   10 * time.Second,
			Handshake: 30 * time.Second,
			Shutdown:  30 * time.Second,
			Admin:     10 * time.Minute,
		},
	}
}

func (c *Config) embedded() bool { return c.Upstream == "" }

// localUser is the configured user with the name (checked already).
func (c *Config) localUser(name string) *User {
	for i, u := range c.localUsers() {
		if u.Name == name {
			return &c.localUsers()[i]
		}
	}
	return nil
}

// localUsers is the account list heapproxy checks itself.
func (c *Config) localUsers() []User {
	if len(c.Users) == 0 {
		return []User{{Name: "root"}}
	}
	return c.Users
}

// stage2 returns SHA1(SHA1(password)), what mysql_native_password needs to
// check a reply; nil for an empty password.
func (u *User) stage2() ([]byte, error) {
	switch {
	case u.PasswordHash != "":
		h, err := mysql.DecodePasswordHex(u.PasswordHash)
		if err != nil || len(h) != 20 {
			return nil, fmt.Errorf("user %q: password_hash must be '*' and 40 hex digits", u.Name)
		}
		return h, nil
	case u.Password != "":
		return mysql.NativePasswordHash([]byte(u.Password)), nil
	}
	return nil, nil
}

func (c *Config) clientTLS() (*tls.Config, error) {
	if c.TLS.Cert == "" && c.TLS.Key == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLS.Cert, c.TLS.Key)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// UpstreamClientTLS is the TLS configuration of heapproxy's connections to
// the upstream (upstream_tls; nil when it is off). The server name is the
// upstream's host unless upstream_tls names one.
func (c *Config) UpstreamClientTLS() (*tls.Config, error) {
	if !c.UpstreamTLS.Enabled {
		return nil, nil
	}
	host, _, _ := net.SplitHostPort(c.Upstream)
	conf := &tls.Config{
		ServerName:         cmp.Or(c.UpstreamTLS.ServerName, host),
		InsecureSkipVerify: c.UpstreamTLS.InsecureSkipVerify, //nolint:gosec // the operator's explicit choice
		MinVersion:         tls.VersionTLS12,
	}
	if c.UpstreamTLS.CA != "" {
		pem, err := os.ReadFile(c.UpstreamTLS.CA)
		if err != nil {
			return nil, fmt.Errorf("read upstream CA: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("upstream CA %s holds no PEM certificate", c.UpstreamTLS.CA)
		}
	}
	return conf, nil
}

// Validate checks what can be checked before listening.
func (c *Config) Validate() error {
	if c.Listen == "" {
		return fmt.Errorf("listen address is empty")
	}
	for i := range c.Users {
		if c.Users[i].Name == "" {
			return fmt.Errorf("users[%d]: name is empty", i)
		}
		if _, err := c.Users[i].stage2(); err != nil {
			return err
		}
	}
	if err := checkProfileUsers(c.ProfileUsers); err != nil {
		return err
	}
	switch c.Auth {
	case "", AuthPassThrough:
	case AuthLocal:
		if c.Upstream == "" {
			return fmt.Errorf("auth: local needs an upstream; without one heapproxy always checks its users")
		}
		if len(c.Users) == 0 {
			return fmt.Errorf("auth: local needs users")
		}
	default:
		return fmt.Errorf("auth must be %q or %q, not %q", AuthPassThrough, AuthLocal, c.Auth)
	}
	if c.UpstreamTLS.Enabled && c.Upstream == "" {
		return fmt.Errorf("upstream_tls is enabled but no upstream is set")
	}
	seen := map[int64]bool{}
	for i, sc := range c.Schedules {
		if sc.Every < profiling.MinScheduleEvery || sc.Every > profiling.MaxScheduleEvery {
			return fmt.Errorf("schedules[%d]: every %s must be from %s to %s", i, sc.Every, profiling.MinScheduleEvery, profiling.MaxScheduleEvery)
		}
		if seen[sc.Node] {
			return fmt.Errorf("schedules[%d]: node %d is scheduled twice", i, sc.Node)
		}
		seen[sc.Node] = true
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("max_connections is %d: it must be 0 (%d) or more", c.MaxConnections, defaultMaxConnections)
	}
	if c.MaxPendingLogins < 0 {
		return fmt.Errorf("max_pending_logins is %d: it must be 0 (%d) or more", c.MaxPendingLogins, defaultMaxPendingLogins)
	}
	if c.MaxDumps < 0 {
		return fmt.Errorf("max_dumps is %d: it must be 0 (one per CPU) or more", c.MaxDumps)
	}
	if c.MaxHeldDumps < 0 {
		return fmt.Errorf("max_held_dumps is %d: it must be 0 (2 x max_dumps) or more", c.MaxHeldDumps)
	}
	return nil
}
