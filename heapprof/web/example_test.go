package web_test

import (
	"net/http"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/web"
)

// The server mounts the view on its --http address, reading its snapshot
// store as it is, and counts into the same Metrics from its connection and
// dump paths.
func ExampleNew() {
	store := snapshot.NewMemory(snapshot.Retention{PerNode: 16})
	defer store.Close()
	metrics := web.NewMetrics(nil)
	h, err := web.New(web.Options{
		Store:   store,
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
