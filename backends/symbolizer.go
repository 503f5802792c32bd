package backends

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/ianlancetaylor/demangle"
)

// symbolBatch is how many addresses go in one symbolizer request: enough to
// keep round trips few, small enough for a GET query and the BE's buffers.
const symbolBatch = 256

// RemoteSymbolizer names a profile's addresses through a node's remote
// symbolizer (gperftools protocol: POST "0xa+0xb", answer lines
// "0xa<TAB or space>name"), for nodes whose binary is not local. It
// satisfies heapprof.Symbolizer.
type RemoteSymbolizer struct {
	c    *caller
	node Node
	path string
}

// RemoteSymbolizer returns the symbolizer of a registered node, or an
// *UnsupportedError when its kind has none.
func (r *Registry) RemoteSymbolizer(node Node) (*RemoteSymbolizer, error) {
	n, d, err := r.resolve(node)
	if err != nil {
		return nil, err
	}
	url := d.SymbolURL(n)
	if url == "" {
		reason := "it has no gperftools-style /pprof/symbol endpoint; configure the node's binary for local symbolization"
		if n.Kind == Self {
			reason = "its profiles arrive symbolized (runtime/pprof)"
		}
		return nil, &UnsupportedError{Kind: n.Kind, Op: OpSymbolize, Reason: reason}
	}
	return &RemoteSymbolizer{c: r.caller, node: n, path: strings.TrimPrefix(url, n.BaseURL())}, nil
}

// Symbolize fills Location.Line of every location that has none with the
// names the node gives its address (one frame, or TiKV's inlined frames;
// the protocol has no file:line). Addresses the node cannot name stay
// unsymbolized.
func (s *RemoteSymbolizer) Symbolize(ctx context.Context, p *profile.Profile) error {
	var addrs []uint64
	seen := map[uint64]bool{}
	for _, loc := range p.Location {
		if len(loc.Line) == 0 && !seen[loc.Address] {
			seen[loc.Address] = true
			addrs = append(addrs, loc.Address)
		}
	}
	names := make(map[uint64][]string, len(addrs))
	for start := 0; start < len(addrs); start += symbolBatch {
		batch := addrs[start:min(start+symbolBatch, len(addrs))]
		if err := s.lookup(ctx, batch, names); err != nil {
			return err
		}
	}
	funcs := map[string]*profile.Function{}
	for _, f := range p.Function {
		if f.SystemName == "" && f.Filename == "" {
			funcs[f.Name] = f
		}
	}
	for _, loc := range p.Location {
		frames, ok := names[loc.Address]
		if len(loc.Line) != 0 || !ok {
			continue
		}
		for _, name := range frames {
			f := funcs[name]
			if f == nil {
				f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
				p.Function = append(p.Function, f)
				funcs[name] = f
			}
			loc.Line = append(loc.Line, profile.Line{Function: f})
		}
	}
	return nil
}

// lookup asks the node for one batch. POST is the protocol; Go 1.22+
// services register "GET /debug/pprof/symbol" only and answer 405, so then
// the addresses go in the query.
func (s *RemoteSymbolizer) lookup(ctx context.Context, batch []uint64, names map[uint64][]string) error {
	var q strings.Builder
	for i, a := range batch {
		if i > 0 {
			q.WriteByte('+')
		}
		q.WriteString("0x")
		q.WriteString(strconv.FormatUint(a, 16))
	}
	a, err := s.c.do(ctx, s.node, OpSymbolize, http.MethodPost, s.path, []byte(q.String()))
	method := http.MethodPost
	if err == nil && a.status == http.StatusMethodNotAllowed {
		method = http.MethodGet
		a, err = s.c.do(ctx, s.node, OpSymbolize, method, s.path+"?"+q.String(), nil)
	}
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return &NodeError{Node: s.node, Op: OpSymbolize, Err: &statusError{Method: method, Path: s.path, Status: a.status, Body: a.body}}
	}
	if err := parseSymbolAnswer(a.body, s.node.Kind == TiKV, names); err != nil {
		return &NodeError{Node: s.node, Op: OpSymbolize, Err: fmt.Errorf("%s %s: %w", method, s.path, err)}
	}
	return nil
}

// parseSymbolAnswer reads "0x<addr><TAB or space><name>" lines (and the
// "num_symbols:" line Go adds) into names, innermost frame first. TiKV joins
// a PC's inlined frames with "--" (innermost first, as backtrace::resolve
// yields them) and answers "??" or "<unknown>" for names it lacks: those
// stay unsymbolized.
func parseSymbolAnswer(body []byte, splitInline bool, names map[uint64][]string) error {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "num_symbols:") {
			continue
		}
		addr, name, ok := strings.Cut(text, "\t")
		if !ok {
			addr, name, ok = strings.Cut(text, " ")
		}
		hex, isHex := strings.CutPrefix(addr, "0x")
		v, err := strconv.ParseUint(hex, 16, 64)
		if !ok || !isHex || err != nil {
			return fmt.Errorf("%w: line %d is not \"0x<addr> <name>\": %s", ErrBadAnswer, line, snippet([]byte(text)))
		}
		var frames []string
		parts := []string{name}
		if splitInline {
			parts = strings.Split(name, "--")
		}
		for _, f := range parts {
			if f = strings.TrimSpace(f); f != "" && f != "??" && f != "<unknown>" {
				// jeprof pipes the answer through c++filt: nodes may
				// answer mangled names.
				frames = append(frames, demangle.Filter(f))
			}
		}
		if len(frames) > 0 {
			names[v] = frames
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	return nil
}
