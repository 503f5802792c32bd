package symbolize

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/heapproxy/heapproxy/heapprof/symbolize/elfsym"
)

// Defaults of a Debuginfod client.
const (
	// DefaultDebuginfodTimeout bounds one request, body included.
	DefaultDebuginfodTimeout = 2 * time.Minute
	// DefaultDebuginfodCacheBytes caps the disk cache.
	DefaultDebuginfodCacheBytes = 4 << 30
	// debuginfodMissTTL is how long a build-id every server answered 404
	// for is not asked again; debuginfodErrTTL the same after a failure
	// (timeout, refused connection), so a dead server does not cost every
	// dump its timeout.
	debuginfodMissTTL = 10 * time.Minute
	debuginfodErrTTL  = time.Minute
)

// ErrNotFound: no debuginfod server has the build-id.
var ErrNotFound = errors.New("no debuginfod server has it")

// ErrTooLarge: a server's file is larger than the client takes.
var ErrTooLarge = errors.New("file over the size limit")

// DebuginfodOptions configure a Debuginfod client.
type DebuginfodOptions struct {
	// Servers are base URLs (http or https), asked in order.
	Servers []string
	// Dir is the disk cache, laid out as a debug directory:
	// Dir/.build-id/xx/rest.debug.
	Dir string
	// MaxBytes caps the files kept in Dir; the least recently used go
	// first. 0 means DefaultDebuginfodCacheBytes.
	MaxBytes int64
	// MaxFileBytes bounds one download; 0 or more than MaxBytes means
	// MaxBytes.
	MaxFileBytes int64
	// Timeout bounds one request; 0 means DefaultDebuginfodTimeout.
	Timeout time.Duration
	// Client sends the requests; nil makes one.
	Client *http.Client
}

// Debuginfod fetches ELF debug files by GNU build-id from debuginfod
// servers (elfutils' protocol: GET /buildid/<hex>/debuginfo, then
// /buildid/<hex>/executable) into a disk cache that Local reads as one
// more debug directory. It is safe for concurrent use.
type Debuginfod struct {
	opt     DebuginfodOptions
	servers []*url.URL
	client  *http.Client
	flight  singleflight.Group

	mu     sync.Mutex
	misses map[string]missed // build-id -> last failure
	evict  sync.Mutex        // one eviction pass at a time
}

type missed struct {
	err   error
	until time.Time
}

// NewDebuginfod returns a client, creating its cache directory.
func NewDebuginfod(opt DebuginfodOptions) (*Debuginfod, error) {
	if len(opt.Servers) == 0 {
		return nil, errors.New("debuginfod: no servers")
	}
	if opt.Dir == "" {
		return nil, errors.New("debuginfod: no cache directory")
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultDebuginfodCacheBytes
	}
	if opt.MaxFileBytes <= 0 || opt.MaxFileBytes > opt.MaxBytes {
		opt.MaxFileBytes = opt.MaxBytes
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultDebuginfodTimeout
	}
	d := &Debuginfod{opt: opt, client: opt.Client, misses: make(map[string]missed)}
	if d.client == nil {
		d.client = &http.Client{Timeout: opt.Timeout}
	}
	for _, s := range opt.Servers {
		u, err := url.Parse(strings.TrimRight(s, "/"))
		if err != nil {
			return nil, fmt.Errorf("debuginfod server %q: %w", s, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("debuginfod server %q: want an http:// or https:// URL", s)
		}
		d.servers = append(d.servers, u)
	}
	if err := os.MkdirAll(filepath.Join(opt.Dir, ".build-id"), 0o755); err != nil {
		return nil, fmt.Errorf("debuginfod cache: %w", err)
	}
	return d, nil
}

// Dir is the cache directory, to put in Local.SearchPath.
func (d *Debuginfod) Dir() string { return d.opt.Dir }

// Servers are the servers asked, as configured.
func (d *Debuginfod) Servers() []string { return d.opt.Servers }

// cachePath is where the debug file of id lives in the cache.
func (d *Debuginfod) cachePath(id string) string {
	return filepath.Join(d.opt.Dir, ".build-id", id[:2], id[2:]+".debug")
}

// Cached returns the cached file of a build-id, or "".
func (d *Debuginfod) Cached(id string) string {
	if !validBuildID(id) {
		return ""
	}
	p := d.cachePath(strings.ToLower(id))
	if !isFile(p) {
		return ""
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // recently used: evicted last
	return p
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func validBuildID(id string) bool {
	if len(id) < 4 || len(id) > 128 || len(id)%2 != 0 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Fetch returns the path of a debug file for build-id id: from the disk
// cache, else downloaded from the first server that has it (its
// debuginfo, or its executable when no server has debuginfo). The file
// is checked to be an ELF file carrying that build-id and symbols or
// DWARF. Errors wrap ErrNotFound when every server answered 404.
func (d *Debuginfod) Fetch(ctx context.Context, id string) (string, error) {
	if !validBuildID(id) {
		return "", fmt.Errorf("debuginfod: %q is not a build-id", id)
	}
	id = strings.ToLower(id)
	if p := d.Cached(id); p != "" {
		return p, nil
	}
	d.mu.Lock()
	m, ok := d.misses[id]
	d.mu.Unlock()
	if ok && time.Now().Before(m.until) {
		return "", m.err
	}
	ch := d.flight.DoChan(id, func() (any, error) {
		// The download is shared: it goes on for the others if the
		// first caller leaves, within the request timeout.
		p, err := d.download(context.WithoutCancel(ctx), id)
		if err != nil {
			ttl := debuginfodErrTTL
			if errors.Is(err, ErrNotFound) {
				ttl = debuginfodMissTTL
			}
			d.mu.Lock()
			d.misses[id] = missed{err: err, until: time.Now().Add(ttl)}
			d.mu.Unlock()
		}
		return p, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-ctx.Done():
		return "", fmt.Errorf("debuginfod %s: %w", id, context.Cause(ctx))
	}
}

func (d *Debuginfod) download(ctx context.Context, id string) (string, error) {
	var errs []error
	for _, kind := range []string{"debuginfo", "executable"} {
		notFound := 0
		for _, srv := range d.servers {
			p, err := d.get(ctx, srv, id, kind)
			if err == nil {
				return p, nil
			}
			if errors.Is(err, ErrNotFound) {
				notFound++
				continue
			}
			errs = append(errs, err)
		}
		if notFound < len(d.servers) {
			break // a server failed otherwise: its error says more than a 404
		}
	}
	if len(errs) == 0 {
		return "", fmt.Errorf("debuginfod: build-id %s: %w (asked %s)", id, ErrNotFound, strings.Join(d.opt.Servers, ", "))
	}
	return "", fmt.Errorf("debuginfod: build-id %s: %w", id, errors.Join(errs...))
}

// get downloads one file into the cache, within the request timeout and
// the size limit, and checks it before it is renamed into place.
func (d *Debuginfod) get(ctx context.Context, srv *url.URL, id, kind string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opt.Timeout)
	defer cancel()
	u := srv.JoinPath("buildid", id, kind)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", "heapproxy")
	resp, err := d.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return "", fmt.Errorf("GET %s: %w", u.Redacted(), ErrNotFound)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("GET %s: HTTP %d %s", u.Redacted(), resp.StatusCode, http.StatusText(resp.StatusCode))
	case resp.ContentLength > d.opt.MaxFileBytes:
		return "", fmt.Errorf("GET %s: %d bytes: %w (%d bytes)", u.Redacted(), resp.ContentLength, ErrTooLarge, d.opt.MaxFileBytes)
	}
	tmpDir := filepath.Join(d.opt.Dir, ".tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return "", fmt.Errorf("debuginfod cache: %w", err)
	}
	f, err := os.CreateTemp(tmpDir, id+".*")
	if err != nil {
		return "", fmt.Errorf("debuginfod cache: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	n, err := io.Copy(f, io.LimitReader(resp.Body, d.opt.MaxFileBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	if n > d.opt.MaxFileBytes {
		return "", fmt.Errorf("GET %s: %w (%d bytes)", u.Redacted(), ErrTooLarge, d.opt.MaxFileBytes)
	}
	if err := checkDebugFile(tmp, id); err != nil {
		return "", fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	dst := d.cachePath(id)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("debuginfod cache: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", fmt.Errorf("debuginfod cache: %w", err)
	}
	if err := d.shrink(dst); err != nil {
		return "", err
	}
	return dst, nil
}

// checkDebugFile accepts an ELF file with build-id id and symbols or DWARF.
func checkDebugFile(path, id string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("not an ELF file: %w", err)
	}
	defer f.Close()
	if got := elfsym.BuildID(f); got != id {
		return fmt.Errorf("the file's build-id is %q, not %s", got, id)
	}
	if f.Section(".debug_info") == nil && f.Section(".symtab") == nil {
		return fmt.Errorf("%w: the server's file has neither DWARF nor a symbol table (stripped)", ErrNotFound)
	}
	return nil
}

// shrink evicts the least recently used files until the cache is within
// MaxBytes, keeping keep.
func (d *Debuginfod) shrink(keep string) error {
	d.evict.Lock()
	defer d.evict.Unlock()
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var files []entry
	var total int64
	root := filepath.Join(d.opt.Dir, ".build-id")
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return nil // a file evicted meanwhile by another process
		}
		info, err := de.Info()
		if err != nil {
			return nil
		}
		files = append(files, entry{p, info.Size(), info.ModTime()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return fmt.Errorf("debuginfod cache: %w", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for _, f := range files {
		if total <= d.opt.MaxBytes {
			break
		}
		if f.path == keep {
			continue
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("debuginfod cache: evict: %w", err)
		}
		total -= f.size
	}
	return nil
}
