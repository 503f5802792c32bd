package heapprof

import (
	"context"
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// WriteProto writes p as a gzipped pprof protobuf that `go tool pprof`
// opens as is. It marks every mapping whose locations are all symbolized
// as having functions, file names, line numbers and inline frames, so
// pprof shows our symbols instead of trying to symbolize the mapping's
// file again (which may not exist where the profile is opened). The raw
// jemalloc counts Parse keeps ride along as numeric labels, so parsing the
// output again renders the same jeprof graph.
func WriteProto(w io.Writer, p *profile.Profile) error {
	return WriteProtoContext(context.Background(), w, p)
}

// WriteProtoContext is WriteProto failing with ctx's error (wrapped) when
// ctx has ended before the protobuf is written.
func WriteProtoContext(ctx context.Context, w io.Writer, p *profile.Profile) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write pprof protobuf: %w", err)
	}
	symbolized := make(map[*profile.Mapping]bool, len(p.Mapping))
	for _, m := range p.Mapping {
		symbolized[m] = true
	}
	for _, loc := range p.Location {
		if loc.Mapping != nil && len(loc.Line) == 0 {
			symbolized[loc.Mapping] = false
		}
	}
	for _, m := range p.Mapping {
		if symbolized[m] {
			m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames = true, true, true, true
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write pprof protobuf: %w", err)
	}
	if err := p.Write(w); err != nil {
		return fmt.Errorf("write pprof protobuf: %w", err)
	}
	return nil
}
