package profiling

import (
	"context"
	"fmt"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// symbolized parses a dump and names its addresses: with the node's binary
// when configured, else through its /pprof/symbol endpoint, else from the
// mapped files on this machine. Go profiles arrive symbolized.
func (s *Service) symbolized(ctx context.Context, node backends.Node, raw []byte) (*profile.Profile, error) {
	release, err := s.dumpSlot(ctx, node)
	if err != nil {
		return nil, err
	}
	defer func() { release() }()
	p, err := heapprof.ParseLimit(ctx, raw, s.opt.MaxDumpBytes)
	if err != nil {
		return nil, fmt.Errorf("parse dump of node %d: %w", node.ID, err)
	}
	if p.HasFunctions() {
		return p, nil
	}
	var sym heapprof.Symbolizer = &symbolize.Local{Binary: node.Binary, SearchPath: s.opt.SymbolPath, Cache: s.opt.Symbols}
	if node.Binary == "" {
		if remote, err := s.opt.Registry.RemoteSymbolizer(node); err == nil {
			// The node names the addresses: a wait on the network, which
			// holds no slot.
			sym = remote
			release()
			release = func() {}
		}
	}
	if err := sym.Symbolize(ctx, p); err != nil {
		return nil, fmt.Errorf("symbolize dump of node %d: %w", node.ID, err)
	}
	return p, nil
}
