package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/server"
)

// fileConfig is the YAML file: the server's settings at the top level and
// the sections that wire backends and heapprof.
type fileConfig struct {
	server.Config `yaml:",inline"`
	// Nodes are the configured backends.
	Nodes []nodeConfig `yaml:"nodes"`
	// SelfNodeID is heapproxy's own built-in node.
	SelfNodeID int64 `yaml:"self_node_id"`
	// SelfProfileActive starts heapproxy's own heap sampling on (Go's
	// default rate), so dump_dot_snapshot on its node works at once.
	SelfProfileActive bool `yaml:"self_profile_active"`
	// NodeTimeout bounds each HTTP call to a node (StarRocks' FE waits 60 s).
	NodeTimeout time.Duration `yaml:"node_timeout"`
	// LivenessInterval is how often each node's HTTP port is checked for
	// SHOW BACKENDS' Alive, LastHeartbeat and ErrMsg (0: never).
	LivenessInterval time.Duration `yaml:"liveness_interval"`
	// MaxDumpBytes bounds what one node answer may hold.
	MaxDumpBytes int64 `yaml:"max_dump_bytes"`
	// SymbolPath lists directories searched for node binaries and
	// .build-id debug files.
	SymbolPath []string `yaml:"symbol_path"`
	// SymbolServers are debuginfod servers asked by build-id for the debug
	// files of stripped binaries; SymbolCache keeps what they send.
	SymbolServers       []string          `yaml:"symbol_servers"`
	SymbolCache         symbolCacheConfig `yaml:"symbol_cache"`
	SymbolServerTimeout time.Duration     `yaml:"symbol_server_timeout"`
	// Discovery reads the nodes of a StarRocks/Doris FE upstream.
	Discovery discoveryConfig `yaml:"discovery"`
	// HTTP is the address of the snapshot view, /metrics and /healthz;
	// empty serves none. Off loopback the view asks for the credentials
	// of a profile user (basic auth, checked like a MySQL login) or
	// HTTPBearerToken.
	HTTP string `yaml:"http"`
	// HTTPAllowedHosts are further names the view answers to (its Host
	// header is checked against DNS rebinding).
	HTTPAllowedHosts []string `yaml:"http_allowed_hosts"`
	// HTTPBearerToken is accepted as "Authorization: Bearer <token>" (a
	// Prometheus scraper's); HTTPBearerTokenFile reads it from a file.
	HTTPBearerToken     string `yaml:"http_bearer_token"`
	HTTPBearerTokenFile string `yaml:"http_bearer_token_file"`
	// Snapshots says where dumps are kept and for how long.
	Snapshots snapshotsConfig `yaml:"snapshots"`
	// SQL bounds the embedded default's heapprof SQL engine.
	SQL sqlConfig `yaml:"sql"`
}

// symbolCacheConfig is where debuginfod files are kept (default: the
// user's cache directory, 4 GiB, least recently used evicted).
type symbolCacheConfig struct {
	Dir      string `yaml:"dir"`
	MaxBytes int64  `yaml:"max_bytes"`
}

// sqlConfig bounds the heapprof SQL engine (bytes; 0: the defaults, 256 MiB
// per statement, 512 MiB for all, 64 MiB for one string value).
type sqlConfig struct {
	MaxStatementMemory int64 `yaml:"max_statement_memory"`
	MaxTotalMemory     int64 `yaml:"max_total_memory"`
	MaxValueBytes      int64 `yaml:"max_value_bytes"`
}

type snapshotsConfig struct {
	// Dir is the local store (the embedded default's).
	Dir string `yaml:"dir"`
	// DSN, when set, keeps snapshots in a MySQL-compatible database instead
	// (go-sql-driver syntax, e.g. "heapproxy:pw@tcp(fe:9030)/"): several
	// proxies share it and BI tools query its heapprof database through
	// the upstream.
	DSN string `yaml:"dsn"`
	// PerNode and MaxAge bound what is kept (0: no bound).
	PerNode int           `yaml:"per_node"`
	MaxAge  time.Duration `yaml:"max_age"`
}

type nodeConfig struct {
	ID       int64  `yaml:"id"`
	Kind     string `yaml:"kind"`
	Host     string `yaml:"host"`
	HTTPPort int    `yaml:"http_port"`
	// Binary is the node's executable on this machine, for symbols.
	Binary string `yaml:"binary"`
	// Role is "backend" (default) or "compute".
	Role     string `yaml:"role"`
	httpAuth `yaml:",inline"`
}

// httpAuth is HTTP basic auth towards nodes (Doris' enable_all_http_auth,
// StarRocks' enable_http_auth): the password in the file, in a file of its
// own, or in an environment variable, so a secret need not sit in the YAML.
type httpAuth struct {
	HTTPUser         string `yaml:"http_user"`
	HTTPPassword     string `yaml:"http_password"`
	HTTPPasswordFile string `yaml:"http_password_file"`
	HTTPPasswordEnv  string `yaml:"http_password_env"`
}

// password resolves the configured password source (at most one).
func (a httpAuth) password() (backends.Secret, error) {
	n := 0
	for _, v := range []string{a.HTTPPassword, a.HTTPPasswordFile, a.HTTPPasswordEnv} {
		if v != "" {
			n++
		}
	}
	switch {
	case n > 1:
		return "", fmt.Errorf("set one of http_password, http_password_file and http_password_env")
	case a.HTTPPasswordFile != "":
		return backends.ReadSecretFile(a.HTTPPasswordFile)
	case a.HTTPPasswordEnv != "":
		v, ok := os.LookupEnv(a.HTTPPasswordEnv)
		if !ok {
			return "", fmt.Errorf("http_password_env: environment variable %s is not set", a.HTTPPasswordEnv)
		}
		return backends.Secret(v), nil
	}
	return backends.Secret(a.HTTPPassword), nil
}

type discoveryConfig struct {
	User     string        `yaml:"user"`
	Password string        `yaml:"password"`
	Kind     string        `yaml:"kind"`
	Interval time.Duration `yaml:"interval"`
	// httpAuth is the basic auth for every discovered node.
	httpAuth `yaml:",inline"`
	// AllowLinkLocal lets nodes have link-local or cloud metadata
	// addresses (refused by default: a FE's row must not aim heapproxy there).
	AllowLinkLocal bool `yaml:"allow_link_local"`
}

func defaultFileConfig() fileConfig {
	return fileConfig{
		Config:            server.DefaultConfig(),
		SelfNodeID:        1,
		SelfProfileActive: true,
		NodeTimeout:       backends.DefaultTimeout,
		LivenessInterval:  10 * time.Second,
		Discovery:         discoveryConfig{Kind: string(backends.StarRocks), Interval: time.Minute},
		Snapshots:         snapshotsConfig{Dir: "heapproxy-data", PerNode: 100},
	}
}

// loadConfig reads the YAML file at path over cfg. Its errors speak YAML:
// the key, its line, what it wants (explainYAML).
func loadConfig(path string, cfg *fileConfig) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty, or only comments: the defaults
		}
		return fmt.Errorf("config %s: %w", path, explainYAML(data, reflect.TypeFor[fileConfig](), err))
	}
	return nil
}

// nodes checks the configured nodes and returns them with the compute set.
func (c *fileConfig) nodes() ([]backends.Node, map[int64]bool, error) {
	var out []backends.Node
	compute := map[int64]bool{}
	seen := map[int64]bool{c.SelfNodeID: true}
	for i, nc := range c.Nodes {
		kind, err := backends.ParseKind(nc.Kind)
		if err != nil {
			return nil, nil, fmt.Errorf("nodes[%d]: %w", i, err)
		}
		if seen[nc.ID] {
			return nil, nil, fmt.Errorf("nodes[%d]: id %d is used twice (self_node_id is %d)", i, nc.ID, c.SelfNodeID)
		}
		seen[nc.ID] = true
		if kind != backends.Self && (nc.Host == "" || nc.HTTPPort <= 0) {
			return nil, nil, fmt.Errorf("nodes[%d] (id %d): host and http_port are required", i, nc.ID)
		}
		switch nc.Role {
		case "", "backend":
		case "compute":
			compute[nc.ID] = true
		default:
			return nil, nil, fmt.Errorf("nodes[%d] (id %d): role must be backend or compute, not %q", i, nc.ID, nc.Role)
		}
		pw, err := nc.password()
		if err != nil {
			return nil, nil, fmt.Errorf("nodes[%d] (id %d): %w", i, nc.ID, err)
		}
		out = append(out, backends.Node{ID: nc.ID, Kind: kind, Host: nc.Host, HTTPPort: nc.HTTPPort,
			Binary: nc.Binary, Source: backends.SourceConfig, Alive: true, HTTPUser: nc.HTTPUser, HTTPPassword: pw})
	}
	return out, compute, nil
}
