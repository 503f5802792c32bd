// Command heapproxy-jeprof is heapproxy's jeprof-like commands (dot, text,
// folded, flamegraph, proto) without the server: `heapproxy dot ...`
// hands itself to this binary when `make build` put it beside heapproxy
// (package helper). It takes the same command lines; run through
// heapproxy, which falls back to running them in-process.
package main

import (
	"fmt"
	"os"

	// Its init runs the command and exits.
	_ "github.com/heapproxy/heapproxy/cmd/heapproxy/internal/jeprofcmd"
)

func main() {
	fmt.Fprintln(os.Stderr, "heapproxy-jeprof: run as heapproxy-jeprof COMMAND [flags] BINARY PROFILE, "+
		"COMMAND one of dot, text, folded, flamegraph, proto (heapproxy help COMMAND)")
	os.Exit(2)
}
