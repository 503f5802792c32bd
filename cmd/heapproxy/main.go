// Command heapproxy is a MySQL-protocol proxy that answers StarRocks-style
// ADMIN EXECUTE HeapProf statements for any jemalloc or Go cluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/heapproxy/heapproxy/backends"
	// First among heapproxy's packages to initialize: it hands the jeprof-like
	// commands to heapproxy-jeprof when make build put one beside heapproxy.
	_ "github.com/heapproxy/heapproxy/cmd/heapproxy/internal/helper"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/heapprof/web"
	"github.com/heapproxy/heapproxy/server"
)

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string) error {
	fs, f := newServerFlags()
	pos, err := parseArgs(fs, args, printUsage, os.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q: the server takes flags only; a command comes first (heapproxy COMMAND ...)", pos[0]), printUsage}
	}
	if *f.version {
		fmt.Print(versionText())
		return nil
	}
	configFile, listen, upstream, dataDir, httpAddr, logLevel, eventLoops :=
		f.configFile, f.listen, f.upstream, f.dataDir, f.httpAddr, f.logLevel, f.eventLoops
	cfg := defaultFileConfig()
	if *configFile != "" {
		if err := loadConfig(*configFile, &cfg); err != nil {
			return err
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listen":
			cfg.Listen = *listen
		case "upstream":
			cfg.Upstream = *upstream
		case "data-dir":
			cfg.Snapshots.Dir = *dataDir
		case "http":
			cfg.HTTP = *httpAddr
		case "event-loops":
			cfg.EventLoops = *eventLoops
		}
	})
	log, err := newLogger(*logLevel)
	if err != nil {
		return err
	}
	defer log.Sync()

	// The relay reads and writes sockets with raw system calls, which keep
	// their P for the call (tens of µs for a loopback write), and the event
	// loops block in epoll_wait holding theirs: twice as many Ps as CPUs
	// leave idle Ps, so the runtime neither hands a loop's P away nor
	// starves the session goroutines (bench/proxy/README.md).
	// GOMAXPROCS in the environment still decides.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(2 * runtime.GOMAXPROCS(0))
	}
	log.Debug("scheduler", zap.Int("gomaxprocs", runtime.GOMAXPROCS(0)))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if !cfg.SelfProfileActive {
		// Like a jemalloc node started with prof_active:false: enable_prof()
		// on heapproxy's own node sets the sampling rate.
		runtime.MemProfileRate = 0
	}
	if err := cfg.Config.Validate(); err != nil {
		return err
	}
	deps, err := wire(ctx, &cfg, log)
	if err != nil {
		return err
	}
	store, err := openStore(ctx, cfg.Snapshots)
	if err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	defer store.Close()
	deps.Snapshots = store
	if cfg.Upstream == "" {
		// The embedded default serves the heapprof schema itself, read
		// from the store (as is the HTTP view).
		engine, err := sqlview.NewWithOptions(store, sqlview.Options{
			MaxStatementMemory: cfg.SQL.MaxStatementMemory, MaxTotalMemory: cfg.SQL.MaxTotalMemory,
			MaxValueBytes: cfg.SQL.MaxValueBytes, Logger: log})
		if err != nil {
			return err
		}
		defer engine.Close()
		deps.SQL = engine
	}
	metrics := web.NewMetrics(web.DefaultDumpBuckets())
	deps.Metrics = metrics
	metrics.WatchNodes(func() []web.NodeHealth {
		hs := deps.Registry.Health()
		out := make([]web.NodeHealth, len(hs))
		for i, h := range hs {
			out[i] = web.NodeHealth{ID: h.ID, Kind: string(h.Kind), Alive: h.Alive,
				LastHeartbeat: h.LastHeartbeat, Checked: !h.LastCheck.IsZero()}
		}
		return out
	})
	if cfg.HTTP != "" {
		opts := web.Options{Store: store, Metrics: metrics, Logger: log,
			ListenAddr: cfg.HTTP, AllowedHosts: cfg.HTTPAllowedHosts, BearerToken: cfg.HTTPBearerToken}
		if cfg.HTTPBearerTokenFile != "" {
			b, err := os.ReadFile(cfg.HTTPBearerTokenFile)
			if err != nil {
				return fmt.Errorf("http_bearer_token_file: %w", err)
			}
			opts.BearerToken = strings.TrimSpace(string(b))
		}
		if !onLoopback(cfg.HTTP) {
			// Profiles are for profile users: off loopback, a login.
			a, err := server.NewWebAuthenticator(cfg.Config)
			if err != nil {
				return err
			}
			opts.Authenticator = a
		}
		h, err := web.New(opts)
		if err != nil {
			return err
		}
		stopHTTP, err := serveHTTP(cfg.HTTP, h, log)
		if err != nil {
			return err
		}
		defer func() {
			// Open page loads get the shutdown's grace, not forever.
			ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeouts.Shutdown)
			defer cancel()
			stopHTTP(ctx)
		}()
	}
	srv, err := server.New(cfg.Config, log, deps)
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		log.Info("signal received, shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Timeouts.Shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown", zap.Error(err))
	}
	return <-errc
}

// onLoopback tells an address only this machine reaches.
func onLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// wire builds the node registry (configured nodes, heapproxy itself, and
// discovery from a StarRocks/Doris FE upstream).
func wire(ctx context.Context, cfg *fileConfig, log *zap.Logger) (server.Deps, error) {
	nodes, compute, err := cfg.nodes()
	if err != nil {
		return server.Deps{}, err
	}
	opts := backends.Options{Timeout: cfg.NodeTimeout, MaxResponseBytes: cfg.MaxDumpBytes, Logger: log,
		AllowLinkLocal: cfg.Discovery.AllowLinkLocal}
	var disc *server.FEDiscoverer
	if cfg.Discovery.User != "" {
		if cfg.Upstream == "" {
			return server.Deps{}, fmt.Errorf("discovery needs an upstream FE (--upstream)")
		}
		kind, err := backends.ParseKind(cfg.Discovery.Kind)
		if err != nil {
			return server.Deps{}, fmt.Errorf("discovery: %w", err)
		}
		pw, err := cfg.Discovery.password()
		if err != nil {
			return server.Deps{}, fmt.Errorf("discovery: %w", err)
		}
		upTLS, err := cfg.UpstreamClientTLS()
		if err != nil {
			return server.Deps{}, err
		}
		disc = &server.FEDiscoverer{Addr: cfg.Upstream, User: cfg.Discovery.User, Password: cfg.Discovery.Password,
			Kind: kind, Timeout: cfg.Timeouts.Connect, AllowLinkLocal: cfg.Discovery.AllowLinkLocal,
			HTTPUser: cfg.Discovery.HTTPUser, HTTPPassword: pw, TLS: upTLS}
		opts.Discoverer = disc
	}
	reg := backends.NewRegistry(opts)
	reg.Add(backends.SelfNode(cfg.SelfNodeID))
	reg.Add(nodes...)
	if disc != nil {
		if err := reg.Refresh(ctx); err != nil {
			log.Warn("node discovery failed; retrying every interval", zap.Error(err))
		}
		go reg.Run(ctx, cfg.Discovery.Interval)
	}
	if cfg.LivenessInterval > 0 {
		go reg.RunLiveness(ctx, cfg.LivenessInterval)
	}
	return server.Deps{
		Registry:            reg,
		SelfID:              cfg.SelfNodeID,
		SymbolPath:          cfg.SymbolPath,
		MaxDumpBytes:        cfg.MaxDumpBytes,
		SymbolServers:       cfg.SymbolServers,
		SymbolCacheDir:      cfg.SymbolCache.Dir,
		SymbolCacheMaxBytes: cfg.SymbolCache.MaxBytes,
		SymbolServerTimeout: cfg.SymbolServerTimeout,
		IsCompute: func(id int64) bool {
			return compute[id] || (disc != nil && disc.IsCompute(id))
		},
	}, nil
}

func openStore(ctx context.Context, c snapshotsConfig) (snapshot.Store, error) {
	r := snapshot.Retention{PerNode: c.PerNode, MaxAge: c.MaxAge}
	if c.DSN != "" {
		return snapshot.OpenMySQL(ctx, c.DSN, r)
	}
	return snapshot.OpenDir(c.Dir, r)
}

func newLogger(level string) (*zap.Logger, error) {
	lvl, err := zap.ParseAtomicLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	c := zap.NewProductionConfig()
	c.Level = lvl
	c.Sampling = nil
	c.EncoderConfig.TimeKey = "ts"
	c.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	// "every":"2s", not 2 (seconds as a float).
	c.EncoderConfig.EncodeDuration = zapcore.StringDurationEncoder
	return c.Build()
}
