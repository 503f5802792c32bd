package elfsym

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
)

// sparseCase is a section of units (4-byte or 12-byte length headers,
// random bodies) deflated as a compressed debug section holds it.
type sparseCase struct {
	plain []byte
	units []span
}

func newSparseCase(t *testing.T, rng *rand.Rand, n int) sparseCase {
	t.Helper()
	var c sparseCase
	for i := range n {
		body := make([]byte, 1+rng.IntN(120<<10))
		for j := range body {
			body[j] = byte(rng.IntN(7)) // compressible, like DWARF
		}
		start := len(c.plain)
		if i%5 == 4 { // 64-bit DWARF
			c.plain = binary.LittleEndian.AppendUint32(c.plain, 0xffffffff)
			c.plain = binary.LittleEndian.AppendUint64(c.plain, uint64(len(body)))
		} else {
			c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(len(body)))
		}
		c.plain = append(c.plain, body...)
		c.units = append(c.units, span{start, len(c.plain)})
	}
	return c
}

// section returns a fresh debugSection over c's deflated bytes, in a
// mapped file as an image's are (inflate drops the compressed pages it
// has read from the resident set; inflating again reads them back).
func (c sparseCase) section(t *testing.T) *debugSection {
	t.Helper()
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, 6)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(c.plain)
	w.Close()
	path := filepath.Join(t.TempDir(), "section.deflate")
	if err := os.WriteFile(path, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := mapFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw := m.data
	buf, err := anonymousMap(len(c.plain))
	if err != nil {
		t.Fatal(err)
	}
	in := bytes.NewReader(raw)
	return &debugSection{file: m, size: len(c.plain), order: binary.LittleEndian, z: flate.NewReader(in), in: in, raw: raw, buf: buf, unitAt: -1}
}

// check reads unit u through s.slice and compares it with the original.
func (c sparseCase) check(t *testing.T, s *debugSection, u int) []byte {
	t.Helper()
	sp := c.units[u]
	b := s.slice(sp.start, sp.end)
	if len(b) < sp.end || !bytes.Equal(b[sp.start:sp.end], c.plain[sp.start:sp.end]) {
		t.Fatalf("unit %d [%d, %d): wrong bytes (slice of %d)", u, sp.start, sp.end, len(b))
	}
	return b[sp.start:sp.end]
}

func keptBytes(s *debugSection) int {
	n := 0
	for _, v := range s.valid {
		n += v.end - v.start
	}
	return n
}

// TestSparseInflate: a section told which units will be read keeps those
// (and what is asked for ahead of the stream) and drops the rest, without
// inflating anything twice; asking for dropped bytes inflates the section
// again, keeping everything, and leaves the slices handed out before as
// they were.
func TestSparseInflate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := newSparseCase(t, rng, 40)
	s := c.section(t)
	s.plan([]int{c.units[3].start, c.units[30].start, c.units[9].start})
	// Out of order, as parallel decoders ask.
	u30 := c.check(t, s, 30)
	u3 := c.check(t, s, 3)
	u9 := c.check(t, s, 9)
	// Ahead of the stream, unplanned: kept without starting again.
	c.check(t, s, 35)
	if s.restarted {
		t.Fatal("planned and forward reads inflated the section again")
	}
	if want := c.units[3].end - c.units[3].start + c.units[9].end - c.units[9].start +
		c.units[30].end - c.units[30].start + c.units[35].end - c.units[35].start; keptBytes(s) != want {
		t.Errorf("kept %d bytes, want the 4 units' %d (of %d inflated)", keptBytes(s), want, s.pos)
	}
	// Behind the stream, dropped: inflated again.
	c.check(t, s, 20)
	if !s.restarted {
		t.Fatal("a dropped unit was read without inflating again")
	}
	for _, x := range []struct {
		u int
		b []byte
	}{{3, u3}, {9, u9}, {30, u30}} {
		sp := c.units[x.u]
		if !bytes.Equal(x.b, c.plain[sp.start:sp.end]) {
			t.Errorf("unit %d changed under its reader", x.u)
		}
	}
	all, err := s.all()
	if err != nil || !bytes.Equal(all, c.plain) {
		t.Fatalf("all: %v, equal %v", err, bytes.Equal(all, c.plain))
	}
}

// TestSparseInflateRandom reads random units in random orders, with
// random plans and reads of a few bytes inside units (a DIE's string),
// against the original bytes.
func TestSparseInflateRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := newSparseCase(t, rng, 30)
	restarts, sparse := 0, 0
	for round := range 40 {
		s := c.section(t)
		if round%4 != 0 {
			var plan []int
			for range rng.IntN(8) {
				plan = append(plan, c.units[rng.IntN(len(c.units))].start)
			}
			s.plan(plan)
		}
		for range 12 {
			u := rng.IntN(len(c.units))
			if rng.IntN(3) == 0 {
				sp := c.units[u]
				off := sp.start + rng.IntN(sp.end-sp.start)
				b := s.slice(off, off+1)
				if len(b) <= off || b[off] != c.plain[off] {
					t.Fatalf("round %d: byte %d wrong", round, off)
				}
				if e := len(b); !bytes.Equal(b[off:e], c.plain[off:e]) {
					t.Fatalf("round %d: bytes from %d to %d wrong", round, off, e)
				}
				continue
			}
			c.check(t, s, u)
			if rng.IntN(5) == 0 {
				s.plan([]int{c.units[rng.IntN(len(c.units))].start})
			}
		}
		if s.restarted {
			restarts++
		} else if s.sparse {
			sparse++
		}
		if all, err := s.all(); err != nil || !bytes.Equal(all, c.plain) {
			t.Fatalf("round %d: all: %v", round, err)
		}
	}
	// Both ways a planned section goes, or the test tests less than it says.
	if restarts == 0 || sparse == 0 {
		t.Errorf("%d rounds inflated again, %d stayed sparse: want some of each", restarts, sparse)
	}
}

// TestSparseInflateLibc symbolizes what a threaded program's stacks hold
// of libc (clone3, start_thread, the start of main) from libc6-dbg's
// compressed .debug_info, as addr2line does, keeping only their units:
// clone3's lies megabytes into the section.
func TestSparseInflateLibc(t *testing.T) {
	dbg := libcDebugFile(t)
	out, err := exec.Command("nm", "--defined-only", dbg).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", dbg, err)
	}
	want := map[string]bool{"clone3": true, "start_thread": true, "__libc_start_call_main": true}
	var pcs []uint64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && want[f[2]] && strings.ContainsAny(f[1], "tT") {
			a, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			pcs = append(pcs, a+5, a+17) // inside, as return addresses are
			delete(want, f[2])
		}
	}
	if len(want) > 0 {
		t.Fatalf("%s has no %v", dbg, want)
	}
	answers := addr2line(t, dbg, pcs)
	o := openMapped(t, dbg)
	if o.dw.raw.info.plain != nil {
		t.Fatalf("%s: want a compressed .debug_info", dbg)
	}
	info := o.dw.raw.info
	o.dw.predecode(pcs, 0)
	seen := map[fnKey]bool{}
	got := map[uint64][]Frame{}
	o.dw.inBatches(sortedUnique(pcs), 0, func(uint64) bool { return false }, func(pc uint64) {
		got[pc] = o.lookupRun(pc, seen)
	})
	for _, pc := range pcs {
		if !sameFrames(got[pc], answers[pc]) {
			t.Errorf("%#x:\n got %v\nwant %v", pc, got[pc], answers[pc])
		}
	}
	info.mu.Lock()
	defer info.mu.Unlock()
	if info.restarted {
		t.Error(".debug_info was inflated twice")
	}
	kept, units := keptBytes(info), 0
	read := map[int]bool{}
	for _, pc := range pcs {
		for _, off := range o.dw.unitsFor(pc) {
			read[int(off)] = true
		}
	}
	for off := range read {
		units += 4 + int(binary.LittleEndian.Uint32(info.buf[off:])) // libc's units are 32-bit DWARF
	}
	t.Logf(".debug_info: %d bytes inflated, %d kept (the units read: %d bytes)", info.pos, kept, units)
	if kept > units {
		t.Errorf("kept %d bytes of .debug_info, more than the %d bytes of the units read", kept, units)
	}
	if info.pos < 1<<20 {
		t.Errorf("only %d bytes of .debug_info inflated: clone3's unit should lie megabytes in", info.pos)
	}
}

// TestSparseInflateConcurrent reads units from several goroutines at once,
// as the parallel unit decoders do, while another plans more: every read
// must see the original bytes, including reads of dropped units that make
// the section inflate again under the others' feet.
func TestSparseInflateConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := newSparseCase(t, rng, 24)
	for round := range 8 {
		s := c.section(t)
		s.plan([]int{c.units[2].start, c.units[11].start, c.units[19].start})
		done := make(chan string, 5)
		for g := range 4 {
			go func() {
				r := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				for range 10 {
					u := r.IntN(len(c.units))
					sp := c.units[u]
					b := s.slice(sp.start, sp.end)
					if len(b) < sp.end || !bytes.Equal(b[sp.start:sp.end], c.plain[sp.start:sp.end]) {
						done <- "unit " + strconv.Itoa(u) + " wrong"
						return
					}
				}
				done <- ""
			}()
		}
		go func() {
			for u := range c.units {
				if u%3 == 0 {
					s.plan([]int{c.units[u].start})
				}
			}
			done <- ""
		}()
		for range 5 {
			if msg := <-done; msg != "" {
				t.Fatalf("round %d: %s", round, msg)
			}
		}
		if all, err := s.all(); err != nil || !bytes.Equal(all, c.plain) {
			t.Fatalf("round %d: all: %v", round, err)
		}
	}
}
