package heapprof

// CONTRACT between Parse, a Symbolizer and the renderers (WriteDOT,
// WriteText, WriteFolded). It is what reproduces jeprof's nm + addr2line
// symbolization (sub MapToSymbols / MapSymbolsWithNM in /usr/bin/jeprof):
//
//  1. Addresses. After Parse, Location.Address is exactly the address jeprof
//     looks up (callers already decremented by one); Location.Mapping is the
//     executable mapping from MAPPED_LIBRARIES that contains it (Start, Limit,
//     Offset, File as /proc/self/maps printed them), or nil. A symbolizer maps
//     the address into the ELF file itself and looks it up as is.
//
//  2. Lines. After Symbolize, Location.Line is ordered like pprof and like
//     `addr2line -f -C -i` prints: Line[0] is the innermost inlined frame,
//     Line[len-1] the function that contains the PC. Function.Filename and
//     Line.Line come from addr2line's file:line ("" / 0 where it prints "??").
//     An empty Line means "not symbolized" and renders as the address in 16
//     hex digits, as jeprof prints PCs it has no symbol for.
//
//  3. Names. The brief's first contract (Function.Name = addr2line's name,
//     renderer does the rest) cannot reproduce jeprof: jeprof also runs
//     `nm -n --demangle` (or `nm -D -n --demangle`), and for each PC replaces
//     addr2line's name on EVERY frame (inlined ones too) whose
//     ShortFunctionName is a prefix of the nm symbol covering the PC, and
//     uses nm's name for "??" frames. nm names carry their address,
//     "name<0000000000001139>", and when one short name stands for several
//     such full names (C++ overloads like work(int)/work(double), static
//     functions of the same name) jeprof prints "work@1139". Neither the nm
//     symbol nor its address can be derived from addr2line's output, so the
//     symbolizer makes jeprof's naming decision (as heapprof/symbolize does):
//       - Function.SystemName is jeprof's full name verbatim: addr2line's
//         name, or nm's name with its "<%016x>" address tag where jeprof
//         takes nm's; "??" where jeprof keeps "??".
//       - Function.Name is the same name without the address tag (what
//         pprof users should see).
//     Functions are therefore distinct per (SystemName, Filename). When
//     SystemName is empty the renderer uses Name as the full name (profiles
//     symbolized elsewhere, e.g. Go's protobuf); it then differs from jeprof
//     only where jeprof would append "@<address>".
//
// The renderer applies ShortFunctionName, "(inline)" marking, the "@addr"
// disambiguation, RemoveUninterestingFrames and the rest of jeprof's
// pipeline itself. Profiles that arrive symbolized (Go's net/http/pprof
// protobuf) need no Symbolizer.

import (
	"context"

	"github.com/google/pprof/profile"
)

// Symbolizer fills in Location.Line (and the Functions they point to) of a
// parsed profile as described in the contract above. Implementations live
// outside this package (heapprof/symbolize for local ELF files, a remote
// /pprof/symbol client for nodes whose binary is not local).
type Symbolizer interface {
	Symbolize(ctx context.Context, p *profile.Profile) error
}

// Symbolized tells a profile that arrived symbolized and needs no
// Symbolizer: every location has its lines, or lies in a mapping that says
// it has functions. pprof's Profile.HasFunctions looks only at mappings, so
// it holds for a location outside every mapping: a jemalloc dump whose
// MAPPED_LIBRARIES lists no executable mapping that holds its PCs (an
// empty section; a process under qemu-user, where the host's maps show
// the guest's code as not executable) would pass for symbolized and render
// as bare addresses, where jeprof names them from the program, unrelocated.
func Symbolized(p *profile.Profile) bool {
	for _, loc := range p.Location {
		if len(loc.Line) == 0 && (loc.Mapping == nil || !loc.Mapping.HasFunctions) {
			return false
		}
	}
	return true
}
