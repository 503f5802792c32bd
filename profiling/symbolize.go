package profiling

import (
	"context"
	"fmt"

	"github.com/google/pprof/profile"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof"
)

// symbolized parses a dump and names its addresses through the symbolizer
// chain (symbolchain.go): the node's binary or symbol_path, debuginfod
// servers, the node's own symbolizer, and finally the raw address. Go
// profiles arrive symbolized. What could not be named is recorded as
// warnings in the profile's comments (Warnings) and logged.
func (s *Service) symbolized(ctx context.Context, node backends.Node, raw []byte) (*profile.Profile, error) {
	release, err := s.dumpSlot(ctx, node)
	if err != nil {
		return nil, err
	}
	p, err := heapprof.ParseLimit(ctx, raw, s.opt.MaxDumpBytes)
	release()
	if err != nil {
		return nil, fmt.Errorf("parse dump of node %d: %w", node.ID, err)
	}
	if heapprof.Symbolized(p) {
		return p, nil
	}
	warnings, err := s.symbolizeChain(ctx, node, p)
	if err != nil {
		return nil, err
	}
	if len(warnings) > 0 {
		s.metrics.Error("symbolize_incomplete")
		s.log.Warn("dump symbolized in part", zap.Int64("node", node.ID), zap.String("addr", node.Addr()),
			zap.Strings("warnings", warnings))
		for _, w := range warnings {
			p.Comments = append(p.Comments, warningPrefix+w)
		}
	}
	return p, nil
}
