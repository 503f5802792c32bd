package backends

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/pprof/profile"
	"github.com/ianlancetaylor/demangle"
)

// symbolBatch is how many addresses go in one symbolizer request: enough to
// keep round trips few, small enough for a GET query and the BE's buffers.
const symbolBatch = 256

// Limits on what a node's remote symbolizer may add (Options fields of the
// same meaning; zero takes these).
const (
	// DefaultSymbolTimeout bounds one Symbolize call, all batches.
	DefaultSymbolTimeout = 30 * time.Second
	// DefaultMaxSymbolAnswerBytes bounds one answer (256 addresses; a
	// long demangled C++ or Rust name is a few KiB).
	DefaultMaxSymbolAnswerBytes = 4 << 20
	// DefaultMaxSymbolNameBytes bounds one name: longer ones are cut (and
	// end in "...").
	DefaultMaxSymbolNameBytes = 1024
	// DefaultMaxSymbolBytes bounds all names one Symbolize call adds.
	DefaultMaxSymbolBytes = 64 << 20
	// maxSymbolFrames bounds the inlined frames of one address (TiKV).
	maxSymbolFrames = 64
)

// symbolLimits are a Symbolize call's bounds.
type symbolLimits struct {
	timeout     time.Duration
	answerBytes int64
	nameBytes   int
	totalBytes  int64
}

func newSymbolLimits(o Options) symbolLimits {
	l := symbolLimits{timeout: o.SymbolTimeout, answerBytes: o.MaxSymbolAnswerBytes,
		nameBytes: o.MaxSymbolNameBytes, totalBytes: o.MaxSymbolBytes}
	if l.timeout <= 0 {
		l.timeout = DefaultSymbolTimeout
	}
	if l.answerBytes <= 0 {
		l.answerBytes = DefaultMaxSymbolAnswerBytes
	}
	if l.nameBytes <= 0 {
		l.nameBytes = DefaultMaxSymbolNameBytes
	}
	if l.totalBytes <= 0 {
		l.totalBytes = DefaultMaxSymbolBytes
	}
	return l
}

// RemoteSymbolizer names a profile's addresses through a node's remote
// symbolizer (gperftools protocol: POST "0xa+0xb", answer lines
// "0xa<TAB or space>name"), for nodes whose binary is not local. It
// satisfies heapprof.Symbolizer.
type RemoteSymbolizer struct {
	c      *caller
	node   Node
	path   string
	limits symbolLimits
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
	lim := newSymbolLimits(r.opts)
	c := *r.caller
	c.maxBytes = min(c.maxBytes, lim.answerBytes)
	c.timeout = min(c.timeout, lim.timeout)
	return &RemoteSymbolizer{c: &c, node: n, path: strings.TrimPrefix(url, n.BaseURL()), limits: lim}, nil
}

// Symbolize fills Location.Line of every location that has none with the
// names the node gives its address (one frame, or TiKV's inlined frames;
// the protocol has no file:line). Addresses the node cannot name stay
// unsymbolized. When a batch fails (the node's error, e.g. StarRocks
// main's 404 "Symbol resolution is not available"), the names of the
// batches before it are kept and the error is returned. What the node may
// add is bounded: the whole call by Options.SymbolTimeout, each answer by
// MaxSymbolAnswerBytes, each name by MaxSymbolNameBytes (cut), all names
// by MaxSymbolBytes (then the call fails, ErrTooLarge, and the profile is
// left as it was); lines for addresses not asked for are ignored.
func (s *RemoteSymbolizer) Symbolize(ctx context.Context, p *profile.Profile) error {
	ctx, cancel := context.WithTimeout(ctx, s.limits.timeout)
	defer cancel()
	var addrs []uint64
	seen := map[uint64]bool{}
	for _, loc := range p.Location {
		if len(loc.Line) == 0 && !seen[loc.Address] {
			seen[loc.Address] = true
			addrs = append(addrs, loc.Address)
		}
	}
	names := make(map[uint64][]string, len(addrs))
	budget := &symbolBudget{want: seen, nameBytes: s.limits.nameBytes, left: s.limits.totalBytes, limit: s.limits.totalBytes}
	var failed error
	for start := 0; start < len(addrs); start += symbolBatch {
		batch := addrs[start:min(start+symbolBatch, len(addrs))]
		if err := s.lookup(ctx, batch, budget, names); err != nil {
			if errors.Is(err, ErrTooLarge) {
				return err
			}
			// The batches answered before keep their names.
			failed = err
			break
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
	return failed
}

// lookup asks the node for one batch. POST is the protocol; Go 1.22+
// services register "GET /debug/pprof/symbol" only and answer 405, so then
// the addresses go in the query.
func (s *RemoteSymbolizer) lookup(ctx context.Context, batch []uint64, budget *symbolBudget, names map[uint64][]string) error {
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
		return &NodeError{Node: s.node, Op: OpSymbolize, Err: a.statusErr(method, s.path)}
	}
	if err := parseSymbolAnswer(a.body, s.node.Kind == TiKV, budget, names); err != nil {
		return &NodeError{Node: s.node, Op: OpSymbolize, Err: fmt.Errorf("%s %s: %w", method, s.path, err)}
	}
	return nil
}

// symbolBudget bounds what answers may add to names.
type symbolBudget struct {
	want      map[uint64]bool // the addresses asked for; nil takes any
	nameBytes int             // longest name kept; longer ones are cut
	left      int64           // bytes of names still allowed
	limit     int64           // the total, for the error
}

// cutName shortens a name to at most max bytes, on a rune boundary,
// marking the cut with "...".
func cutName(name string, max int) string {
	if len(name) <= max {
		return name
	}
	cut := max - len("...")
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "..."
}

// parseSymbolAnswer reads "0x<addr><TAB or space><name>" lines (and the
// "num_symbols:" line Go adds) into names, innermost frame first, within
// the budget (lines for addresses not wanted are skipped). TiKV joins a
// PC's inlined frames with "--" (innermost first, as backtrace::resolve
// yields them) and answers "??" or "<unknown>" for names it lacks: those
// stay unsymbolized.
func parseSymbolAnswer(body []byte, splitInline bool, budget *symbolBudget, names map[uint64][]string) error {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
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
			return fmt.Errorf("%w: line %d is not \"0x<addr> <name>\": %s", ErrBadAnswer, line, describe([]byte(text)))
		}
		if budget.want != nil && !budget.want[v] {
			continue
		}
		var frames []string
		parts := []string{name}
		if splitInline {
			if parts = strings.SplitN(name, "--", maxSymbolFrames+1); len(parts) > maxSymbolFrames {
				parts = parts[:maxSymbolFrames]
			}
		}
		for _, f := range parts {
			if f = strings.TrimSpace(f); f != "" && f != "??" && f != "<unknown>" {
				// jeprof pipes the answer through c++filt: nodes may
				// answer mangled names. A mangled name far over the
				// limit is cut, not demangled.
				if len(f) <= 8*budget.nameBytes {
					f = demangle.Filter(f)
				}
				f = cutName(f, budget.nameBytes)
				budget.left -= int64(len(f))
				if budget.left < 0 {
					return fmt.Errorf("the names answered add more than %d bytes (symbolizer limit): %w", budget.limit, ErrTooLarge)
				}
				frames = append(frames, f)
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
