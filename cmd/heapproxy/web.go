package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/web"
)

// webStore shows the snapshot store to the HTTP view.
type webStore struct{ st snapshot.Store }

func (w webStore) Snapshots(ctx context.Context) ([]web.Entry, error) {
	snaps, err := w.st.List(ctx, snapshot.Filter{})
	if err != nil {
		return nil, err
	}
	out := make([]web.Entry, len(snaps))
	for i, s := range snaps {
		out[i] = web.Entry{ID: s.ID, NodeID: s.NodeID, NodeKind: s.NodeKind, NodeAddr: s.NodeAddr,
			TakenAt: s.TakenAt, TotalBytes: s.TotalBytes}
	}
	return out, nil
}

func (w webStore) Profile(ctx context.Context, id string) ([]byte, error) {
	s, err := w.st.Get(ctx, id)
	if err != nil {
		var nf *snapshot.ErrNotFound
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("%w: %s", web.ErrNotFound, id)
		}
		return nil, err
	}
	if len(s.Profile) == 0 {
		return nil, fmt.Errorf("snapshot %s holds a graph rendered on the node, not a profile", id)
	}
	return s.Profile, nil
}

// serveHTTP starts the HTTP view (snapshot list, pprof UI, /metrics,
// /healthz) and returns a function that stops it.
func serveHTTP(addr string, h http.Handler, log *zap.Logger) (func(context.Context) error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Info("http listening", zap.String("addr", ln.Addr().String()))
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", zap.Error(err))
		}
	}()
	return srv.Shutdown, nil
}
