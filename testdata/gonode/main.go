// Command gonode is a tiny Go service for heapproxy's tests: it serves
// net/http/pprof (heap profiling is always on in Go, at
// runtime.MemProfileRate) and allocates along a known call stack.
//
//	go build -o gonode ./testdata/gonode && ./gonode -addr 127.0.0.1:0
//
// It prints "gonode listening on <addr>" once it serves. GET /alloc runs
// gonodeRetainBlocks once more.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/* on http.DefaultServeMux
	"os"
	"runtime"
	"sync"
	"time"
)

// retained keeps the blocks reachable so they stay in the heap profile.
type retained struct {
	mu     sync.Mutex
	blocks [][]byte
}

// gonodeRetainBlocks is the known allocating function the tests look for.
//
//go:noinline
func gonodeRetainBlocks(r *retained, n, size int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; i < n; i++ {
		b := make([]byte, size)
		b[0] = byte(i)
		r.blocks = append(r.blocks, b)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	rate := flag.Int("memprofilerate", 4096, "runtime.MemProfileRate; small so a short test samples")
	flag.Parse()
	runtime.MemProfileRate = *rate

	r := &retained{}
	gonodeRetainBlocks(r, 64, 64<<10)
	http.HandleFunc("/alloc", func(w http.ResponseWriter, _ *http.Request) {
		gonodeRetainBlocks(r, 64, 64<<10)
		fmt.Fprintln(w, "ok")
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "gonode listening on %s\n", ln.Addr())
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}
