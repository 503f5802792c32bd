// Command nodes serves one real jemalloc heap dump as N StarRocks BEs on
// loopback: GET /pprof/heap on ports BASE..BASE+N-1 answers the file's
// bytes (read once), after -delay (a BE's prof.dump takes a while: the
// time heapproxy's lookahead fetches hide); every other path answers 404,
// which heapproxy's liveness check takes as alive. For fan-out benchmarks
// (fanout.sh; NODE_DELAY sets -delay there).
//
//	nodes -n 100 -base 18040 [-delay 200ms] PROF
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	n := flag.Int("n", 100, "nodes")
	base := flag.Int("base", 18040, "first port")
	delay := flag.Duration("delay", 0, "wait before each answer")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: nodes [-n N] [-base PORT] [-delay D] PROF")
		os.Exit(2)
	}
	dump, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodes:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pprof/heap", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(*delay)
		w.Header().Set("Content-Length", strconv.Itoa(len(dump)))
		_, _ = w.Write(dump)
	})
	errs := make(chan error, *n)
	for i := range *n {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*base+i)))
		if err != nil {
			fmt.Fprintln(os.Stderr, "nodes:", err)
			os.Exit(1)
		}
		go func() { errs <- http.Serve(ln, mux) }()
	}
	fmt.Printf("serving %d nodes on 127.0.0.1:%d-%d\n", *n, *base, *base+*n-1)
	fmt.Fprintln(os.Stderr, "nodes:", <-errs)
	os.Exit(1)
}
