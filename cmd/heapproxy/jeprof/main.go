// Command heapproxy-jeprof is heapproxy's jeprof-like commands (dot, text,
// folded, flamegraph, proto) without the server: `heapproxy dot ...`
// hands itself to this binary when `make build` put it beside heapproxy
// (package helper). It takes the same command lines; run through
// heapproxy, which falls back to running them in-process.
package main

import (
	"fmt"
	"os"
	"strings"

	// Its init runs the command and exits; main runs only without one.
	"github.com/heapproxy/heapproxy/cmd/heapproxy/internal/jeprofcmd"
)

func main() {
	var names []string
	for _, c := range jeprofcmd.Commands() {
		names = append(names, c.Name)
	}
	fmt.Fprintf(os.Stderr, "heapproxy-jeprof: run as heapproxy-jeprof COMMAND [flags] BINARY PROFILE, "+
		"COMMAND one of %s (heapproxy help COMMAND)\n", strings.Join(names, ", "))
	os.Exit(2)
}
