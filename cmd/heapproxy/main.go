// Command heapproxy is a MySQL-protocol proxy that answers StarRocks-style
// ADMIN EXECUTE HeapProf statements for any jemalloc or Go cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"gopkg.in/yaml.v3"

	"github.com/heapproxy/heapproxy/server"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "heapproxy:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("heapproxy", flag.ContinueOnError)
	configFile := fs.String("config", "", "YAML configuration file (flags override it)")
	listen := fs.String("listen", "", "MySQL-protocol listen address (default 127.0.0.1:9030)")
	upstream := fs.String("upstream", "", "upstream database HOST:PORT; empty runs the embedded default")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := server.DefaultConfig()
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
		}
	})
	log, err := newLogger(*logLevel)
	if err != nil {
		return err
	}
	defer log.Sync()

	srv, err := server.New(cfg, log)
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-errc:
		return err
	case s := <-sig:
		log.Info("signal received", zap.String("signal", s.String()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeouts.Shutdown)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("shutdown", zap.Error(err))
	}
	if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func loadConfig(path string, cfg *server.Config) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open config: %w", err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
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
	return c.Build()
}
