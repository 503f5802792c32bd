package web_test

import (
	"context"
	"net/http"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/web"
)

// snapshots stands for the server's adapter over its snapshot store.
type snapshots struct{}

func (snapshots) Snapshots(context.Context) ([]web.Entry, error) { return nil, nil }
func (snapshots) Profile(_ context.Context, id string) ([]byte, error) {
	return nil, web.ErrNotFound
}

// The server mounts the view on its --http address and counts into the
// same Metrics from its connection and dump paths.
func ExampleNew() {
	metrics := web.NewMetrics(nil)
	h, err := web.New(web.Options{
		Store:   snapshots{},
		Metrics: metrics,
		// On loopback and without credentials configured the view is open;
		// anywhere else it needs an Authenticator or a BearerToken.
		ListenAddr: "127.0.0.1:8060",
	})
	if err != nil {
		panic(err)
	}
	srv := &http.Server{
		Addr:              "127.0.0.1:8060",
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      2 * time.Minute, // large profiles' pages take seconds
	}
	go srv.ListenAndServe()
	defer srv.Close()

	metrics.ConnOpened()
	start := time.Now()
	// ... dump a node ...
	metrics.Dump("starrocks", time.Since(start), nil)
	metrics.Statement("admin_execute")
	metrics.ConnClosed()
}
