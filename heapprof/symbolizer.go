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
//     Line[len-1] the function that contains the PC. Function.Name is the
//     demangled name exactly as addr2line prints it ("??" where it prints
//     "??"); Function.Filename and Line.Line come from its file:line. An
//     empty Line means "not symbolized" and renders as the address in 16
//     hex digits, which is also what jeprof prints for "??".
//
//  3. nm (addition found necessary while reading jeprof; the brief's
//     contract alone cannot reproduce jeprof). jeprof also runs
//     `nm -n --demangle` (falling back to `nm -D -n --demangle`) and, for
//     each PC, finds the nm symbol whose range [its address, next symbol's
//     address) holds the PC. It then replaces addr2line's name on EVERY
//     frame of that PC (inlined ones too) whose short name (ShortFunctionName)
//     is a prefix of the nm name, and uses the nm name for "??" frames. The
//     nm name carries its address, "name<0000000000001139>" (nm's address
//     column verbatim, 16 hex digits on 64-bit), and when two such names
//     share a short name (C++ overloads, template instances such as
//     work<int>(int) and work<double>(double), static functions in two
//     files) jeprof prints "work@1139" instead of "work". Neither the
//     address nor the nm symbol can be derived from addr2line's output, so:
//
//     Line[len-1].Function.SystemName MUST be the nm symbol for the PC in
//     jeprof's form, demangled name + "<" + nm's hex address + ">", e.g.
//     "std::vector<int, std::allocator<int> >::push_back(int const&)<0000000000001a2e>",
//     or "" when nm has no symbol for it (then jeprof's "0x<16 hex>" form
//     is what jeprof prints: put that in SystemName instead, without "<>").
//     Functions must therefore be keyed by (Name, SystemName, Filename), not
//     by Name alone. The renderer applies jeprof's prefix rule itself.
//
//     Without SystemName the renderer falls back to addr2line's names; the
//     graph then differs from jeprof only where jeprof would have appended
//     "@<address>" or an nm name differs from addr2line's.
//
// Profiles that arrive symbolized (Go's net/http/pprof protobuf) already
// satisfy 2 and need no Symbolizer.

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
