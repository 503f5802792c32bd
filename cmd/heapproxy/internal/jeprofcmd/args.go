package jeprofcmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ErrHelpShown: -h or --help printed the usage to stdout (exit 0).
var ErrHelpShown = errors.New("help shown")

// UsageError is a command line heapproxy does not understand: the error,
// then the usage, on stderr, exit status 2.
type UsageError struct {
	Msg   string
	Usage func(io.Writer)
}

func (e *UsageError) Error() string { return e.Msg }

// WriteUsage prints the usage that follows the error.
func (e *UsageError) WriteUsage(w io.Writer) { e.Usage(w) }

// ExitCode prints err as heapproxy does and returns the exit status: 0
// without an error (or when -h printed the usage), 2 for a command line
// heapproxy does not understand (an error with a WriteUsage method, whose
// usage follows on stderr), 1 for any other failure.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, ErrHelpShown) {
		return 0
	}
	fmt.Fprintln(stderr, "heapproxy:", err)
	var ue interface{ WriteUsage(io.Writer) }
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr)
		ue.WriteUsage(stderr)
		return 2
	}
	return 1
}

// PrintFlags lists a flag set's flags the way the README writes them.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		fmt.Fprintf(w, "%s\n        %s", line, usage)
		switch f.DefValue {
		case "", "0", "false", "[]":
		default:
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// ParseArgs parses fs's flags anywhere among args (before, between or
// after the positional arguments; "--" ends the flags) and returns the
// positional arguments. -h and --help print usage to stdout.
func ParseArgs(fs *flag.FlagSet, args []string, usage func(io.Writer), stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return nil, ErrHelpShown
		}
		if err != nil {
			// The flag package's words, with flags spelled as heapproxy's
			// usage spells them.
			msg := err.Error()
			if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
				msg = "unknown flag --" + name
			} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
				msg = "flag --" + name + " needs a value"
			} else if strings.Contains(msg, " for flag -") {
				msg = strings.Replace(msg, " for flag -", " for --", 1)
			} else {
				msg = strings.Replace(msg, " for -", " for --", 1)
			}
			return nil, &UsageError{msg, usage}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}
