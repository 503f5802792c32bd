package jeprofcmd

import (
	"context"
	"os"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize/elfsym"
)

// prefetch hands the symbolizer the addresses and executable mappings of
// the jemalloc heap_v2 dump in file while heapprof parses it, so the
// DWARF they need is decoded on the other core meanwhile (elfsym's
// Prefetch). It reads the file on its own (heapprof.ScanHeapV2). It is
// only a head start: a file it cannot read this way (another format, not
// a regular file) or a ctx that ends (the parse is done) stops it
// quietly, and Symbolize does what is left.
func prefetch(ctx context.Context, file string, sym *elfsym.Local) {
	maps, addrs := scanHeapV2(ctx, file)
	if len(maps) == 0 || len(addrs) == 0 || ctx.Err() != nil {
		return
	}
	sym.Prefetch(ctx, maps, addrs)
}

// scanHeapV2 is heapprof.ScanHeapV2 of a regular file; nothing for
// anything else.
func scanHeapV2(ctx context.Context, file string) ([]*profile.Mapping, []uint64) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	return heapprof.ScanHeapV2(ctx, f, st.Size())
}
