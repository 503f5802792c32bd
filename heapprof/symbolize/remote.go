package symbolize

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Remote symbolizes through a node's gperftools-style symbol page
// (/pprof/symbol on StarRocks and Doris, /debug/pprof/symbol on TiKV and Go):
// a POST of "0xaddr+0xaddr+..." answered by lines "0xaddr<TAB>name". Names
// are demangled (jeprof pipes the answer through c++filt); several names
// joined by "--" are inlined frames, outermost first, as jeprof reads them.
type Remote struct {
	URL    string
	Client *http.Client // nil means http.DefaultClient; the deadline comes from ctx
	// MaxBytes bounds the answer read; 0 means 64 MiB.
	MaxBytes int64
}

var symbolLine = regexp.MustCompile(`^0x([0-9a-fA-F]+)\s+(.+)$`)

// Symbolize fills in the Locations that have no Line entries.
func (r *Remote) Symbolize(ctx context.Context, p *profile.Profile) error {
	var pcs []uint64
	for _, loc := range p.Location {
		if len(loc.Line) == 0 {
			pcs = append(pcs, loc.Address)
		}
	}
	if len(pcs) == 0 {
		return nil
	}
	pcs = sortedUnique(pcs)
	body := make([]string, len(pcs))
	for i, pc := range pcs {
		body[i] = fmt.Sprintf("0x%016x", pc)
	}
	sort.Strings(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, strings.NewReader(strings.Join(body, "+")))
	if err != nil {
		return fmt.Errorf("symbol request to %s: %w", r.URL, err)
	}
	req.Header.Set("Content-Type", "text/plain")
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("symbol request to %s: %w", r.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("symbol request to %s: %s: %s", r.URL, resp.Status, strings.TrimSpace(string(msg)))
	}
	limit := r.MaxBytes
	if limit <= 0 {
		limit = 64 << 20
	}
	names, err := readSymbolPage(io.LimitReader(resp.Body, limit+1), limit)
	if err != nil {
		return fmt.Errorf("symbol answer from %s: %w", r.URL, err)
	}
	frames := make(map[uint64][]jframe, len(pcs))
	for _, pc := range pcs {
		full, ok := names[pc]
		if !ok {
			full = fmt.Sprintf("0x%016x", pc)
		}
		parts := strings.Split(full, "--")
		fr := make([]jframe, 0, len(parts))
		for i := len(parts) - 1; i >= 0; i-- {
			n := demangleBFD(parts[i])
			fr = append(fr, jframe{name: n, full: n})
		}
		frames[pc] = fr
	}
	attach(p, frames)
	return nil
}

var errTooLarge = errors.New("answer exceeds the size limit")

// readSymbolPage parses "0xaddr<space>name" lines (other lines, such as
// "num_symbols: N", are skipped, as jeprof's ReadSymbols does).
func readSymbolPage(rd io.Reader, limit int64) (map[uint64]string, error) {
	out := make(map[uint64]string)
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var n int64
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		n += int64(len(sc.Bytes())) + 1
		if n > limit {
			return nil, errTooLarge
		}
		m := symbolLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			continue
		}
		out[a] = m[2]
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
