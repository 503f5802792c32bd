package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	// Writes standard gzip (RFC 1952) at 1.5-2x the speed of
	// compress/gzip: bench/snapshot/README.md.
	"github.com/klauspost/compress/gzip"
)

// Dir keeps snapshots in a directory, one subdirectory per snapshot:
//
//	<root>/snapshots/<id>/meta.json       the Snapshot without its blobs
//	<root>/snapshots/<id>/raw.gz          the dump as the node sent it, gzipped
//	                                      ("raw", not gzipped, in stores written
//	                                      before session 4; both are read)
//	<root>/snapshots/<id>/profile.pb.gz   the symbolized pprof profile
//	<root>/snapshots/<id>/functions.jsonl.gz one Function per JSON line
//	<root>/snapshots/<id>/stacks.jsonl.gz    one Stack per JSON line
//
// A snapshot is written into <root>/tmp, every file fsynced, then renamed
// into snapshots/ in one step, so a crash at any moment leaves either the
// whole snapshot or none; dropping one renames it out first. Leftovers in
// tmp/ are removed at open. A snapshot directory that is not readable (not
// written by Dir: copied in by hand, damaged disk) is moved to
// <root>/damaged at open rather than failing the store. One process at a
// time may open a directory (flock on <root>/LOCK). Dir implements Store and
// is safe for concurrent use; an index of the metadata is kept in memory.
type Dir struct {
	root      string
	retention Retention
	now       func() time.Time
	lock      *os.File
	// testHook, when set, is called at named points of Save (crash tests).
	testHook func(stage string)
	// queue saves in the background (SaveBackground).
	queue *Queue

	mu      sync.Mutex
	closed  bool
	index   map[string]Snapshot
	pending map[string]bool // ids being saved
	damaged []string
}

var _ Store = (*Dir)(nil)

const (
	metaFile      = "meta.json"
	rawFile       = "raw"
	rawGzFile     = "raw.gz"
	profileFile   = "profile.pb.gz"
	functionsFile = "functions.jsonl.gz"
	stacksFile    = "stacks.jsonl.gz"
	metaVersion   = 1
)

// dirMeta is meta.json.
type dirMeta struct {
	Version      int       `json:"version"`
	ID           string    `json:"id"`
	NodeID       int64     `json:"node_id"`
	NodeKind     string    `json:"node_kind"`
	NodeAddr     string    `json:"node_addr"`
	TakenAt      time.Time `json:"taken_at"`
	Format       string    `json:"format"`
	TotalBytes   int64     `json:"total_bytes"`
	TotalObjects int64     `json:"total_objects"`
	SamplePeriod int64     `json:"sample_period"`
	// RawSize and ProfileSize let open and Get notice a truncated file.
	RawSize     int64 `json:"raw_size"`
	ProfileSize int64 `json:"profile_size"`
	// RawGzip says the raw dump is raw.gz (RawSize its compressed size);
	// older snapshots have an uncompressed raw.
	RawGzip bool `json:"raw_gzip,omitempty"`
}

// rawName is the file that holds the raw dump.
func (m *dirMeta) rawName() string {
	if m.RawGzip {
		return rawGzFile
	}
	return rawFile
}

// OpenDir opens (creating it if needed) the store in directory path,
// removes what an interrupted Save left behind and indexes the snapshots.
func OpenDir(path string, r Retention) (*Dir, error) {
	for _, sub := range []string{"", "snapshots", "tmp"} {
		if err := os.MkdirAll(filepath.Join(path, sub), 0o750); err != nil {
			return nil, fmt.Errorf("open snapshot dir: %w", err)
		}
	}
	lock, err := os.OpenFile(filepath.Join(path, "LOCK"), os.O_CREATE|os.O_RDWR, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open snapshot dir: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("open snapshot dir %s: locked by another process: %w", path, err)
	}
	d := &Dir{root: path, retention: r, now: time.Now, lock: lock,
		index: map[string]Snapshot{}, pending: map[string]bool{}}
	if err := d.load(); err != nil {
		lock.Close()
		return nil, err
	}
	d.queue = NewQueue(d.Save, runtime.NumCPU(), DefaultQueueLimit())
	return d, nil
}

// load empties tmp/ and indexes snapshots/.
func (d *Dir) load() error {
	tmp := filepath.Join(d.root, "tmp")
	left, err := os.ReadDir(tmp)
	if err != nil {
		return fmt.Errorf("open snapshot dir: %w", err)
	}
	for _, e := range left {
		if err := os.RemoveAll(filepath.Join(tmp, e.Name())); err != nil {
			return fmt.Errorf("open snapshot dir: remove leftover of an interrupted save: %w", err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(d.root, "snapshots"))
	if err != nil {
		return fmt.Errorf("open snapshot dir: %w", err)
	}
	for _, e := range entries {
		m, err := d.readMeta(e.Name())
		var dmg *damagedError
		switch {
		case err == nil:
			d.index[m.ID] = m
		case errors.As(err, &dmg), errors.Is(err, fs.ErrNotExist), !e.IsDir():
			if err := d.quarantine(e.Name()); err != nil {
				return err
			}
		default:
			// Permissions, I/O: not the snapshot's fault; moving it
			// aside would hide good data.
			return fmt.Errorf("open snapshot dir: %w", err)
		}
	}
	return nil
}

// damagedError says a snapshot directory's content is not what Save
// writes.
type damagedError struct{ err error }

func (e *damagedError) Error() string { return e.err.Error() }
func (e *damagedError) Unwrap() error { return e.err }

// quarantine moves an unreadable snapshot directory out of the way.
func (d *Dir) quarantine(name string) error {
	dst := filepath.Join(d.root, "damaged")
	if err := os.MkdirAll(dst, 0o750); err != nil {
		return fmt.Errorf("open snapshot dir: %w", err)
	}
	to := filepath.Join(dst, fmt.Sprintf("%s.%d", name, time.Now().UnixNano()))
	if err := os.Rename(filepath.Join(d.root, "snapshots", name), to); err != nil {
		return fmt.Errorf("open snapshot dir: move damaged snapshot %s aside: %w", name, err)
	}
	d.damaged = append(d.damaged, to)
	return nil
}

// Damaged lists the snapshot directories that open moved to <root>/damaged.
func (d *Dir) Damaged() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.damaged...)
}

func (d *Dir) snapDir(id string) string { return filepath.Join(d.root, "snapshots", id) }

func (d *Dir) readMeta(id string) (Snapshot, error) {
	if err := checkID(id); err != nil {
		return Snapshot{}, &damagedError{err}
	}
	dir := d.snapDir(id)
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return Snapshot{}, err
	}
	var m dirMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return Snapshot{}, &damagedError{fmt.Errorf("snapshot %s: %s: %w", id, metaFile, err)}
	}
	if m.Version != metaVersion || m.ID != id {
		return Snapshot{}, &damagedError{fmt.Errorf("snapshot %s: %s: version %d, id %q", id, metaFile, m.Version, m.ID)}
	}
	for _, f := range []struct {
		name string
		size int64
	}{{m.rawName(), m.RawSize}, {profileFile, m.ProfileSize}} {
		st, err := os.Stat(filepath.Join(dir, f.name))
		if err != nil {
			return Snapshot{}, err
		}
		if st.Size() != f.size {
			return Snapshot{}, &damagedError{fmt.Errorf("snapshot %s: %s has %d bytes, meta says %d", id, f.name, st.Size(), f.size)}
		}
	}
	for _, name := range []string{functionsFile, stacksFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return Snapshot{}, err
		}
	}
	return Snapshot{ID: m.ID, NodeID: m.NodeID, NodeKind: m.NodeKind, NodeAddr: m.NodeAddr,
		TakenAt: m.TakenAt, Format: m.Format, TotalBytes: m.TotalBytes,
		TotalObjects: m.TotalObjects, SamplePeriod: m.SamplePeriod}, nil
}

// Save implements Store.
func (d *Dir) Save(ctx context.Context, s *Snapshot, funcs []Function, stacks []Stack) error {
	if err := checkSave(s); err != nil {
		return err
	}
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return fmt.Errorf("save snapshot %s: store closed", s.ID)
	case d.pending[s.ID]:
		d.mu.Unlock()
		return fmt.Errorf("save snapshot %s: already being saved", s.ID)
	}
	if _, dup := d.index[s.ID]; dup {
		d.mu.Unlock()
		return fmt.Errorf("save snapshot %s: already exists", s.ID)
	}
	d.pending[s.ID] = true
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.pending, s.ID)
		d.mu.Unlock()
	}()

	tmp, err := os.MkdirTemp(filepath.Join(d.root, "tmp"), "save-")
	if err != nil {
		return fmt.Errorf("save snapshot %s: %w", s.ID, err)
	}
	if err := d.write(ctx, tmp, s, funcs, stacks); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("save snapshot %s: %w", s.ID, err)
	}
	d.hook("before-rename")
	if err := os.Rename(tmp, d.snapDir(s.ID)); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("save snapshot %s: %w", s.ID, err)
	}
	if err := syncDir(filepath.Join(d.root, "snapshots")); err != nil {
		// The rename may not be durable; the snapshot is complete on
		// disk either way, so keep it in the index and report.
		d.addIndex(s)
		return fmt.Errorf("save snapshot %s: %w", s.ID, err)
	}
	d.hook("after-rename")
	d.addIndex(s)
	if err := d.prune(); err != nil {
		return &RetentionError{ID: s.ID, Err: err}
	}
	return nil
}

func (d *Dir) hook(stage string) {
	if d.testHook != nil {
		d.testHook(stage)
	}
}

func (d *Dir) addIndex(s *Snapshot) {
	d.mu.Lock()
	d.index[s.ID] = meta(s)
	d.mu.Unlock()
}

// write writes every file of s into dir and fsyncs them and dir; meta.json
// goes last.
func (d *Dir) write(ctx context.Context, dir string, s *Snapshot, funcs []Function, stacks []Stack) error {
	// Text dumps (jemalloc's heap_v2) repeat their addresses on every line:
	// gzip makes a 15 MB one 0.33 MB (BestSpeed, ~10 ms).
	var raw bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&raw, gzip.BestSpeed)
	if _, err := zw.Write(s.Raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, rawGzFile), func(w io.Writer) error {
		_, err := w.Write(raw.Bytes())
		return err
	}); err != nil {
		return err
	}
	d.hook("wrote-raw")
	if err := writeFile(filepath.Join(dir, profileFile), func(w io.Writer) error {
		_, err := w.Write(s.Profile)
		return err
	}); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, functionsFile), func(w io.Writer) error {
		return writeJSONLines(w, len(funcs), func(enc *json.Encoder, i int) error {
			f := funcs[i]
			f.SnapshotID = "" // the directory names it
			return enc.Encode(f)
		})
	}); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, stacksFile), func(w io.Writer) error {
		return writeJSONLines(w, len(stacks), func(enc *json.Encoder, i int) error {
			st := stacks[i]
			st.SnapshotID = ""
			return enc.Encode(st)
		})
	}); err != nil {
		return err
	}
	m := dirMeta{Version: metaVersion, ID: s.ID, NodeID: s.NodeID, NodeKind: s.NodeKind,
		NodeAddr: s.NodeAddr, TakenAt: s.TakenAt, Format: s.Format, TotalBytes: s.TotalBytes,
		TotalObjects: s.TotalObjects, SamplePeriod: s.SamplePeriod,
		RawSize: int64(raw.Len()), ProfileSize: int64(len(s.Profile)), RawGzip: true}
	if err := writeFile(filepath.Join(dir, metaFile), func(w io.Writer) error {
		return json.NewEncoder(w).Encode(m)
	}); err != nil {
		return err
	}
	return syncDir(dir)
}

// writeJSONLines writes n JSON lines gzipped. C++ names repeat a lot: the
// stacks of a 41,601-stack profile take 17 MB as text, 0.97 MB gzipped
// (BestSpeed, ~17 ms).
func writeJSONLines(w io.Writer, n int, encode func(*json.Encoder, int) error) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false) // template names are full of '<' and '>'
	for i := 0; i < n; i++ {
		if err := encode(enc, i); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeFile creates path, lets fill write it through a buffer, and fsyncs
// it: a full disk surfaces here as an error from Write, Flush or Sync.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", path, err)
	}
	return nil
}

// prune applies the retention: each dropped snapshot is first renamed into
// tmp/ (one atomic step), then removed.
func (d *Dir) prune() error {
	d.mu.Lock()
	metas := make([]Snapshot, 0, len(d.index))
	for _, m := range d.index {
		metas = append(metas, m)
	}
	ids := d.retention.expired(metas, d.now())
	var moved []string
	var errs []error
	for _, id := range ids {
		to, err := os.MkdirTemp(filepath.Join(d.root, "tmp"), "drop-")
		if err == nil {
			to = filepath.Join(to, id)
			err = os.Rename(d.snapDir(id), to)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("drop snapshot %s: %w", id, err))
			continue
		}
		delete(d.index, id)
		moved = append(moved, filepath.Dir(to))
	}
	d.mu.Unlock()
	if len(moved) > 0 {
		if err := syncDir(filepath.Join(d.root, "snapshots")); err != nil {
			errs = append(errs, err)
		}
	}
	for _, m := range moved {
		if err := os.RemoveAll(m); err != nil {
			errs = append(errs, fmt.Errorf("remove dropped snapshot: %w", err))
		}
	}
	return errors.Join(errs...)
}

// SaveBackground queues s to be saved by Save in the background and
// returns once it is queued (waiting within ctx while the queue is full):
// see Queue. Get, Functions and Stacks find it at once; List once stored.
func (d *Dir) SaveBackground(ctx context.Context, s *Snapshot, prepare Prepare, done func(error)) error {
	return d.queue.Enqueue(ctx, s, prepare, done)
}

// Queue is the store's background save queue.
func (d *Dir) Queue() *Queue { return d.queue }

// Get implements Store.
func (d *Dir) Get(ctx context.Context, id string) (*Snapshot, error) {
	if s, ok, err := d.queue.Lookup(ctx, id); ok {
		return s, err
	}
	m, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	s := m
	dir := d.snapDir(id)
	if s.Raw, err = readRaw(dir); err != nil {
		return nil, d.readErr(id, err)
	}
	if s.Profile, err = os.ReadFile(filepath.Join(dir, profileFile)); err != nil {
		return nil, d.readErr(id, err)
	}
	return &s, nil
}

// readRaw reads a snapshot's raw dump: raw.gz, or raw in snapshots written
// before it was compressed. gzip's checksum catches a damaged file.
func readRaw(dir string) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, rawGzFile))
	if errors.Is(err, fs.ErrNotExist) {
		return os.ReadFile(filepath.Join(dir, rawFile))
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rawGzFile, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rawGzFile, err)
	}
	return raw, nil
}

func (d *Dir) lookup(id string) (Snapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return Snapshot{}, fmt.Errorf("snapshot %s: store closed", id)
	}
	m, ok := d.index[id]
	if !ok {
		return Snapshot{}, &ErrNotFound{ID: id}
	}
	return m, nil
}

// readErr turns a file that vanished under a concurrent retention into
// ErrNotFound.
func (d *Dir) readErr(id string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &ErrNotFound{ID: id}
	}
	return fmt.Errorf("read snapshot %s: %w", id, err)
}

// List implements Store.
func (d *Dir) List(_ context.Context, f Filter) ([]Snapshot, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, errors.New("list snapshots: store closed")
	}
	out := []Snapshot{}
	for _, m := range d.index {
		if f.match(&m) {
			out = append(out, m)
		}
	}
	d.mu.Unlock()
	sortNewestFirst(out)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Functions implements Store.
func (d *Dir) Functions(ctx context.Context, id string) ([]Function, error) {
	if f, ok, err := d.queue.LookupFunctions(ctx, id); ok {
		return f, err
	}
	if _, err := d.lookup(id); err != nil {
		return nil, err
	}
	out := []Function{}
	err := readLines(filepath.Join(d.snapDir(id), functionsFile), func(dec *json.Decoder) error {
		var f Function
		if err := dec.Decode(&f); err != nil {
			return err
		}
		f.SnapshotID = id
		out = append(out, f)
		return nil
	})
	if err != nil {
		return nil, d.readErr(id, err)
	}
	return out, nil
}

// Stacks implements Store.
func (d *Dir) Stacks(ctx context.Context, id string) ([]Stack, error) {
	if st, ok, err := d.queue.LookupStacks(ctx, id); ok {
		return st, err
	}
	if _, err := d.lookup(id); err != nil {
		return nil, err
	}
	out := []Stack{}
	err := readLines(filepath.Join(d.snapDir(id), stacksFile), func(dec *json.Decoder) error {
		var s Stack
		if err := dec.Decode(&s); err != nil {
			return err
		}
		s.SnapshotID = id
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, d.readErr(id, err)
	}
	return out, nil
}

func readLines(path string, next func(*json.Decoder) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	dec := json.NewDecoder(zr)
	for dec.More() {
		if err := next(dec); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
	}
	return nil
}

// Close saves what the background queue holds (flush), then releases the
// directory for other processes.
func (d *Dir) Close() error {
	d.queue.Close()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return d.lock.Close()
}
