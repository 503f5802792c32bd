// Package backends knows the database nodes heapproxy may profile: a
// registry of nodes (configured, discovered from a StarRocks/Doris FE, and
// heapproxy itself) and one HTTP driver per kind of node that speaks that
// product's real heap-profiling API. See README.md for the sources of each
// API.
package backends

import (
	"context"
	"fmt"
	"net"
	"strconv"
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
	// (HttpHandlerWithAuth) without them.
	HTTPUser     string
	HTTPPassword Secret
	// Source is SourceConfig, SourceDiscovered or SourceBuiltin.
	Source   string
	Alive    bool
	LastSeen time.Time
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

// Addr is the node's HTTP address, host:port.
func (n Node) Addr() string {
	if n.Kind == Self {
		return "in-process"
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(n.HTTPPort))
}

// BaseURL is the root of the node's HTTP API.
func (n Node) BaseURL() string { return "http://" + n.Addr() }

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
