package main

import (
	"io"

	"github.com/heapproxy/heapproxy/cmd/heapproxy/internal/jeprofcmd"
)

// render runs one of the jeprof-like commands (package jeprofcmd). A
// process started with one runs it from jeprofcmd's init instead, before
// the server's packages are initialized; main gets here from tests.
func render(name string, args []string, stdout io.Writer) error {
	return jeprofcmd.Run(name, args, stdout)
}
