package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestDirReopen saves, closes and opens the directory again: the index is
// rebuilt from disk and the retention of the new open applies.
func TestDirReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := OpenDir(dir, Retention{})
	if err != nil {
		t.Fatal(err)
	}
	type saved struct {
		s      *Snapshot
		funcs  []Function
		stacks []Stack
	}
	var all []saved
	for i := 0; i < 3; i++ {
		s, funcs, stacks := newSnap(t, 5, base.Add(time.Duration(i)*time.Hour))
		if err := d.Save(ctx, s, funcs, stacks); err != nil {
			t.Fatal(err)
		}
		all = append(all, saved{s, funcs, stacks})
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.List(ctx, Filter{}); err == nil {
		t.Error("List after Close succeeded")
	}
	d, err = OpenDir(dir, Retention{PerNode: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, sv := range all {
		checkSnapshot(t, d, sv.s, sv.funcs, sv.stacks)
	}
	s, funcs, stacks := newSnap(t, 5, base.Add(5*time.Hour))
	if err := d.Save(ctx, s, funcs, stacks); err != nil {
		t.Fatal(err)
	}
	list, err := d.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list {
		ids = append(ids, m.ID)
	}
	if want := []string{s.ID, all[2].s.ID}; !slices.Equal(ids, want) {
		t.Errorf("after reopen with PerNode 2 and a save: %q, want %q", ids, want)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "snapshots")); len(entries) != 2 {
		t.Errorf("%d snapshot directories on disk, want 2", len(entries))
	}
}

// TestDirOpenCleansUp: leftovers of interrupted saves are removed, a
// snapshot directory that is not readable is moved aside, the rest loads.
func TestDirOpenCleansUp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := OpenDir(dir, Retention{})
	if err != nil {
		t.Fatal(err)
	}
	good, funcs, stacks := newSnap(t, 1, base)
	victim, _, _ := newSnap(t, 1, base.Add(time.Minute))
	for _, s := range []*Snapshot{good, victim} {
		if err := d.Save(ctx, s, funcs, stacks); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "tmp", "save-123", "x"), 0o750))
	must(os.WriteFile(filepath.Join(dir, "tmp", "save-123", rawFile), []byte("half"), 0o640))
	// A snapshot whose raw file lost its tail (not something Save does:
	// a damaged disk, a hand edit), and one whose meta.json is garbage.
	must(os.Truncate(filepath.Join(dir, "snapshots", victim.ID, rawGzFile), 10))
	garbage := filepath.Join(dir, "snapshots", "heap_profile.1.garbage")
	must(os.MkdirAll(garbage, 0o750))
	must(os.WriteFile(filepath.Join(garbage, metaFile), []byte("{not json"), 0o640))
	must(os.WriteFile(filepath.Join(dir, "snapshots", "notes.txt"), []byte("a stray file"), 0o640))

	d, err = OpenDir(dir, Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Errorf("tmp/ still has %d entries", len(left))
	}
	if got := d.Damaged(); len(got) != 3 {
		t.Errorf("Damaged() = %q, want the truncated snapshot, the garbage one and the stray file", got)
	}
	list, err := d.List(ctx, Filter{})
	if err != nil || len(list) != 1 || list[0].ID != good.ID {
		t.Errorf("List = %v, %v; want only %s", list, err, good.ID)
	}
	checkSnapshot(t, d, good, funcs, stacks)
}

// TestDirLock: a second open of the same directory fails until the first
// is closed (two proxies must not share a Dir; they share a MySQL store).
func TestDirLock(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir, Retention{})
	if err != nil {
		t.Fatal(err)
	}
	if d2, err := OpenDir(dir, Retention{}); err == nil {
		d2.Close()
		t.Fatal("second OpenDir of a locked directory succeeded")
	}
	d.Close()
	d2, err := OpenDir(dir, Retention{})
	if err != nil {
		t.Fatalf("OpenDir after Close: %v", err)
	}
	d2.Close()
}

// The raw dump is kept gzipped: a jemalloc text dump takes a fraction of
// its size on disk and reads back byte for byte. Stores written before that
// (an uncompressed raw, no raw_gzip in meta.json) open and read as before.
func TestDirRawCompressed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := OpenDir(dir, Retention{})
	if err != nil {
		t.Fatal(err)
	}
	r := leakRows(t)
	s, funcs, stacks := snapFrom(r, 5, base)
	if err := d.Save(ctx, s, funcs, stacks); err != nil {
		t.Fatal(err)
	}
	snapDir := filepath.Join(dir, "snapshots", s.ID)
	st, err := os.Stat(filepath.Join(snapDir, rawGzFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size()*5 > int64(len(s.Raw)) {
		t.Errorf("raw.gz has %d bytes for a %d-byte heap_v2 dump, want a fifth or less", st.Size(), len(s.Raw))
	}
	checkSnapshot(t, d, s, funcs, stacks)
	d.Close()

	// Rewrite it as an older heapproxy left it.
	gz, err := os.ReadFile(filepath.Join(snapDir, rawGzFile))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	b, err := os.ReadFile(filepath.Join(snapDir, metaFile))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	delete(m, "raw_gzip")
	m["raw_size"] = len(raw)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{os.WriteFile(filepath.Join(snapDir, rawFile), raw, 0o640), os.Remove(filepath.Join(snapDir, rawGzFile)),
		os.WriteFile(filepath.Join(snapDir, metaFile), b, 0o640)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err = OpenDir(dir, Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if dm := d.Damaged(); len(dm) != 0 {
		t.Fatalf("an uncompressed raw counted as damaged: %q", dm)
	}
	checkSnapshot(t, d, s, funcs, stacks)
}
