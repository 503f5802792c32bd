package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/heapproxy/heapproxy/cmd/heapproxy/internal/jeprofcmd"
)

// cli runs heapproxy's command line and returns the exit status: 0, 1 for
// a failure, 2 for a command line heapproxy does not understand (with the
// usage on stderr).
func cli(args []string, stdout, stderr io.Writer) int {
	return jeprofcmd.ExitCode(dispatch(args, stdout), stderr)
}

// dispatch picks the command: none (flags only) is the server.
func dispatch(args []string, stdout io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return run(args)
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help":
		return help(rest, stdout)
	case "version":
		fs := flag.NewFlagSet("heapproxy version", flag.ContinueOnError)
		usage := func(w io.Writer) {
			fmt.Fprintln(w, "usage: heapproxy version\n\nPrints the module version, VCS revision and Go version.")
		}
		pos, err := parseArgs(fs, rest, usage, stdout)
		if err != nil {
			return err
		}
		if len(pos) > 0 {
			return &usageError{fmt.Sprintf("version takes no arguments, got %q", pos[0]), usage}
		}
		fmt.Fprint(stdout, versionText())
		return nil
	}
	if jeprofcmd.Is(name) {
		return render(name, rest, stdout)
	}
	return &usageError{fmt.Sprintf("unknown command %q (commands: %s)", name, strings.Join(commandNames(), ", ")), printUsage}
}

// help prints the usage, or one command's.
func help(args []string, stdout io.Writer) error {
	switch {
	case len(args) == 0:
		printUsage(stdout)
		return nil
	case len(args) > 1:
		return &usageError{"help takes at most one command", printUsage}
	}
	switch name := args[0]; {
	case name == "help":
		fmt.Fprintln(stdout, "usage: heapproxy help [COMMAND]\n\nPrints the usage, or COMMAND's flags.")
	case name == "version":
		fmt.Fprintln(stdout, "usage: heapproxy version\n\nPrints the module version, VCS revision and Go version.")
	case jeprofcmd.Is(name):
		jeprofcmd.Usage(stdout, name)
	default:
		return &usageError{fmt.Sprintf("unknown command %q (commands: %s)", name, strings.Join(commandNames(), ", ")), printUsage}
	}
	return nil
}

func commandNames() []string {
	var names []string
	for _, c := range jeprofcmd.Commands() {
		names = append(names, c.Name)
	}
	return append(names, "version", "help")
}

// serverFlags are the server's flags; run reads them.
type serverFlags struct {
	configFile, listen, upstream, dataDir, httpAddr, logLevel *string
	eventLoops                                                *int
	version                                                   *bool
}

func newServerFlags() (*flag.FlagSet, serverFlags) {
	fs := flag.NewFlagSet("heapproxy", flag.ContinueOnError)
	return fs, serverFlags{
		configFile: fs.String("config", "", "YAML configuration `FILE` (flags override it)"),
		listen:     fs.String("listen", "", "MySQL-protocol listen address `HOST:PORT` (default 127.0.0.1:9030)"),
		upstream:   fs.String("upstream", "", "upstream database `HOST:PORT`; empty runs the embedded default"),
		dataDir:    fs.String("data-dir", "", "`DIR` of the snapshot store (default heapproxy-data)"),
		httpAddr:   fs.String("http", "", "`HOST:PORT` of the HTTP snapshot view, /metrics and /healthz (e.g. 127.0.0.1:9040)"),
		logLevel:   fs.String("log-level", "info", "log `LEVEL`: debug, info, warn, error"),
		eventLoops: fs.Int("event-loops", 0, "`N` threads relaying forwarded statements (0: one per CPU; -1: none, each session's goroutine relays)"),
		version:    fs.Bool("version", false, "print the version and exit"),
	}
}

// printUsage is heapproxy's usage: the server's flags and the commands.
func printUsage(w io.Writer) {
	fmt.Fprint(w, `heapproxy: a MySQL-protocol proxy that answers StarRocks' ADMIN EXECUTE HeapProf for any
jemalloc or Go cluster, and jeprof's command line on files.

usage:
  heapproxy [flags]                  run the proxy (no --upstream: the embedded default)
  heapproxy COMMAND [flags] ARGS...  run a command
  heapproxy help COMMAND             a command's flags

commands:
`)
	for _, c := range jeprofcmd.Commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintf(w, "  %-11s %s\n", "version", "print the module version, VCS revision and Go version")
	fmt.Fprintf(w, "  %-11s %s\n", "help", "this text; help COMMAND: that command's flags")
	fmt.Fprint(w, "\nserver flags (they override the --config file):\n")
	fs, _ := newServerFlags()
	printFlags(w, fs)
	fmt.Fprint(w, "  -h, --help\n        this text\n")
}

// printFlags lists a flag set's flags the way the README writes them.
func printFlags(w io.Writer, fs *flag.FlagSet) { jeprofcmd.PrintFlags(w, fs) }

// usageError is a command line heapproxy does not understand: the error,
// then the usage, on stderr, exit status 2 (jeprofcmd.ExitCode).
type usageError struct {
	msg   string
	usage func(io.Writer)
}

func (e *usageError) Error() string { return e.msg }

// WriteUsage prints the usage that follows the error.
func (e *usageError) WriteUsage(w io.Writer) { e.usage(w) }

// parseArgs parses fs's flags anywhere among args and returns the
// positional arguments (jeprofcmd.ParseArgs).
func parseArgs(fs *flag.FlagSet, args []string, usage func(io.Writer), stdout io.Writer) ([]string, error) {
	return jeprofcmd.ParseArgs(fs, args, usage, stdout)
}

// versionText is the module version, VCS revision and Go version the
// binary was built from.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("heapproxy: no build information\ngo        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	rev := set["vcs.revision"]
	switch {
	case rev == "":
		rev = "unknown (built without VCS information)"
	case set["vcs.time"] != "":
		rev += " (" + set["vcs.time"] + ")"
	}
	if set["vcs.modified"] == "true" {
		rev += ", dirty: built with uncommitted changes"
	}
	return fmt.Sprintf("heapproxy %s\nmodule    %s\nrevision  %s\ngo        %s %s/%s\n",
		bi.Main.Version, bi.Main.Path, rev, bi.GoVersion, runtime.GOOS, runtime.GOARCH)
}
