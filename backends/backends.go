// Package backends knows the database nodes heapproxy may profile: a
// registry of nodes (configured, discovered from a StarRocks/Doris FE, and
// heapproxy itself) and one HTTP driver per kind of node that speaks that
// product's real heap-profiling API. See README.md for the sources of each
// API.
package backends

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Kind names the product a node runs; it selects the Driver.
type Kind string

// The kinds heapproxy can profile.
const (
	StarRocks  Kind = "starrocks"
	Doris      Kind = "doris"
	Databend   Kind = "databend"
	GreptimeDB Kind = "greptimedb"
	TiKV       Kind = "tikv"
	Go         Kind = "go"
	Self       Kind = "heapproxy"
)

// Kinds lists every kind in a stable order.
func Kinds() []Kind {
	return []Kind{StarRocks, Doris, Databend, GreptimeDB, TiKV, Go, Self}
}

// ParseKind maps a configured name to a Kind.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown node kind %q (known: starrocks, doris, databend, greptimedb, tikv, go, heapproxy)", s)
}

// Where a Node came from.
const (
	SourceConfig     = "config"
	SourceDiscovered = "discovered"
	SourceBuiltin    = "builtin"
)

// Node is one process heapproxy may profile.
type Node struct {
	ID            int64
	Kind          Kind
	Host          string
	HTTPPort      int
	HeartbeatPort int
	BePort        int
	BrpcPort      int
	// Binary is a local path of the node's binary, for symbols; optional.
	Binary string
	// HTTPUser and HTTPPassword, when set, go as HTTP basic auth: a Doris
	// BE with enable_all_http_auth=true refuses its profiling handlers
	// (HttpHandlerWithAuth) without them. YAML: http_user, http_password
	// or http_password_file (ReadSecretFile). The password prints as
	// "***" (Secret, Node.Format).
	HTTPUser     string
	HTTPPassword Secret
	// Source is SourceConfig, SourceDiscovered or SourceBuiltin.
	Source   string
	Alive    bool
	LastSeen time.Time
	// ErrMsg is why the last liveness check failed (SHOW BACKENDS ErrMsg).
	ErrMsg string
}

// Secret is a password that prints as "***", so logging a Node does not
// leak it.
type Secret string

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// GoString hides the secret from %#v too.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// Format prints "***" (or nothing for an empty secret) for every verb, so
// no fmt verb (%s, %q, %x, %d...) shows the password.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, s.String())
}

// MarshalText hides the secret from encoders (JSON, YAML, zap.Any).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// maxSecretFileBytes bounds a password file.
const maxSecretFileBytes = 4 << 10

// ReadSecretFile reads a password from a file (YAML http_password_file):
// the whole file, without its trailing line break, at most 4 KiB. Errors
// name the file, never its content.
func ReadSecretFile(path string) (Secret, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("password file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("password file %s: %w", path, err)
	}
	if len(b) > maxSecretFileBytes {
		return "", fmt.Errorf("password file %s: more than %d bytes", path, maxSecretFileBytes)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return "", fmt.Errorf("password file %s is empty", path)
	}
	return Secret(b), nil
}

// plainNode has Node's fields and none of its methods, for Format.
type plainNode Node

// Format prints the node's fields (HTTPPassword as "***") for %v, %+v and
// %s, and Go syntax for %#v, so logging or printing a Node never shows its
// password.
func (n Node) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = io.WriteString(f, "backends.Node"+strings.TrimPrefix(fmt.Sprintf("%#v", plainNode(n)), "backends.plainNode"))
	case verb == 'v' && f.Flag('+'):
		fmt.Fprintf(f, "%+v", plainNode(n))
	default:
		fmt.Fprintf(f, "%v", plainNode(n))
	}
}

// Addr is the node's HTTP address, host:port.
func (n Node) Addr() string {
	if n.Kind == Self {
		return "in-process"
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(n.HTTPPort))
}

// BaseURL is the root of the node's HTTP API, built from Host and HTTPPort
// as a url.URL (IPv6 in brackets), never by pasting text.
func (n Node) BaseURL() string { return n.endpoint("").String() }

// Format says how Dump.Data is encoded.
type Format int

const (
	// FormatJemalloc is jemalloc's raw "heap_v2/<period>" text dump.
	FormatJemalloc Format = iota + 1
	// FormatPprof is a pprof protobuf profile, maybe gzipped (Go services).
	FormatPprof
	// FormatDOT is a graph already rendered on the node by jeprof
	// (Doris 2.1.8+ /jeheap/dump).
	FormatDOT
	// FormatGperftools is the gperftools "heap profile:" text of a
	// tcmalloc build (StarRocks/Doris built without jemalloc).
	FormatGperftools
)

func (f Format) String() string {
	switch f {
	case FormatJemalloc:
		return "jemalloc"
	case FormatPprof:
		return "pprof"
	case FormatDOT:
		return "dot"
	case FormatGperftools:
		return "gperftools"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Dump is one heap profile fetched from a node. A Dump returned by
// Registry.Dump may be shared between concurrent callers: do not modify
// Data.
type Dump struct {
	Data    []byte
	Format  Format
	TakenAt time.Time
	Node    Node
}

// Driver speaks one product's heap-profiling API.
type Driver interface {
	// Enable starts heap sampling (jemalloc prof.active=true).
	Enable(ctx context.Context, n Node) error
	// Disable stops heap sampling.
	Disable(ctx context.Context, n Node) error
	// Status reports whether heap sampling is active.
	Status(ctx context.Context, n Node) (bool, error)
	// Dump fetches the current heap profile.
	Dump(ctx context.Context, n Node) (*Dump, error)
	// SymbolURL is the node's gperftools-style remote symbolizer
	// (GET num_symbols, POST 0xa+0xb), "" when it has none.
	SymbolURL(n Node) string
}

// Operation names used in errors.
const (
	OpEnable  = "enable"
	OpDisable = "disable"
	OpStatus  = "status"
	OpDump    = "dump"
	// OpSymbolize is a call to a node's remote symbolizer.
	OpSymbolize = "symbolize"
)
