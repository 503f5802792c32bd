// Package symbolize resolves the addresses of a heap profile to functions,
// inlined frames and source lines, in-process, the way jeprof does it with
// `nm -n --demangle` and `addr2line -C -f -i` (package elfsym, whose
// types and functions it re-exports), and fetches missing debug files from
// debuginfod servers (Debuginfod).
//
// The split keeps the HTTP client out of elfsym: the command line's
// renderers (heapproxy dot) import elfsym alone, and a package that does
// not import net/http is initialized before the SQL engine's packages,
// which wait for it; heapproxy dot runs from that point (see
// cmd/heapproxy/internal/jeprofcmd).
package symbolize

import (
	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof/symbolize/elfsym"
)

type (
	// Local symbolizes from ELF files on this machine: elfsym.Local.
	Local = elfsym.Local
	// Cache holds parsed ELF images between calls: elfsym.Cache.
	Cache = elfsym.Cache
	// Object is what this machine has for one mapped file of a profile:
	// elfsym.Object.
	Object = elfsym.Object
	// Frame is one record of `addr2line -f -C -i`: elfsym.Frame.
	Frame = elfsym.Frame
)

// ErrNoBuildID: an object's build-id is not known on this machine, so no
// debuginfod server can be asked for it.
var ErrNoBuildID = elfsym.ErrNoBuildID

// NewCache returns an empty cache.
func NewCache() *Cache { return elfsym.NewCache() }

// Demangle demangles a C++ or Rust symbol name as binutils prints it; see
// elfsym.Demangle.
func Demangle(name string) string { return elfsym.Demangle(name) }

// IsLibraryPath tells whether a mapped file is a shared library by
// jeprof's test (ParseLibraries); anything else is a program.
func IsLibraryPath(file string) bool { return elfsym.IsLibraryPath(file) }

// MainProgram is the profile's mapping of the main program, or nil; see
// elfsym.MainProgram.
func MainProgram(p *profile.Profile) *profile.Mapping { return elfsym.MainProgram(p) }
