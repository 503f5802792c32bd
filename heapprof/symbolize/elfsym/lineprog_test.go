package elfsym

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestLineProgram decodes every unit's line table of the test programs and
// their library with lineProgram and with debug/dwarf's LineReader
// (readLinesGo) and expects the same files and sequences, whole and
// filtered to a sample of addresses. TestAddr2Line checks the answers
// built from them against addr2line itself.
func TestLineProgram(t *testing.T) {
	fxs := getFixtures(t)
	for _, tc := range []struct{ name, path string }{
		{"O0-pie", fxs[0].binary},
		{"O2-pie", fxs[1].binary},
		{"O2-nopie", fxs[2].binary},
		{"O2-dwarf4", dwarf4Binary(t)},
		{"lib", fxs[0].lib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := openMapped(t, tc.path)
			pcs := samplePCs(t, tc.path, false, 500)
			units := 0
			d, err := o.dw.data()
			if err != nil {
				t.Fatal(err)
			}
			r := d.Reader()
			for {
				cu, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if cu == nil {
					break
				}
				r.SkipChildren()
				h, err := o.dw.raw.headerFor(int(cu.Offset))
				if err != nil {
					t.Fatal(err)
				}
				ue, err := o.dw.raw.readUnitEntry(h)
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range [][]uint64{nil, pcs} {
					var got, ref unitInfo
					if err := o.dw.readLines(&got, ue, h.addrSize, want); err != nil {
						t.Fatalf("unit %#x: %v", cu.Offset, err)
					}
					if err := ref.readLinesGo(d, cu, want); err != nil {
						t.Fatalf("unit %#x: debug/dwarf: %v", cu.Offset, err)
					}
					if !reflect.DeepEqual(got.files, ref.files) {
						t.Errorf("unit %#x: files\n got %q\nwant %q", cu.Offset, got.files, ref.files)
					}
					if want == nil {
						if d := diffSeqs(got.seqs, ref.seqs); d != "" {
							t.Errorf("unit %#x: %s", cu.Offset, d)
						}
					} else {
						// Filtered: only the rows the wanted addresses
						// need are kept; their lookups must agree.
						for _, a := range want {
							gf, gl, gok := got.line(a)
							rf, rl, rok := ref.line(a)
							if gf != rf || gl != rl || gok != rok {
								t.Errorf("unit %#x: %#x: %s:%d %v, want %s:%d %v", cu.Offset, a, gf, gl, gok, rf, rl, rok)
							}
						}
					}
					if len(ref.seqs) > 0 {
						units++
					}
				}
			}
			if units == 0 {
				t.Errorf("%s: no unit with line sequences", tc.path)
			}
		})
	}
}

func diffSeqs(got, want []lineSeq) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d sequences, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].low != want[i].low || !reflect.DeepEqual(got[i].rows, want[i].rows) {
			return fmt.Sprintf("sequence %d at %#x differs from debug/dwarf's at %#x", i, got[i].low, want[i].low)
		}
	}
	return ""
}

// TestDecodeWanted expects decodeWanted, which picks the rows a set of
// addresses needs while decoding, to give exactly the files and sequences
// of decodeRows with the same addresses, on every unit of the test
// programs: sampled PCs, none of them, and every row's address.
func TestDecodeWanted(t *testing.T) {
	fxs := getFixtures(t)
	for _, tc := range []struct{ name, path string }{
		{"O0-pie", fxs[0].binary},
		{"O2-pie", fxs[1].binary},
		{"O2-dwarf4", dwarf4Binary(t)},
		{"lib", fxs[0].lib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := openMapped(t, tc.path)
			pcs := samplePCs(t, tc.path, false, 500)
			fast := 0
			for off := 0; off < o.dw.raw.info.len(); {
				h, err := o.dw.raw.parseHeader(off)
				if err != nil {
					t.Fatalf("unit at %#x: %v", off, err)
				}
				off = h.end
				ue, err := o.dw.raw.readUnitEntry(h)
				if err != nil {
					t.Fatal(err)
				}
				if ue.stmtList < 0 {
					continue
				}
				prog := func() *lineProgram {
					p, err := parseLineProgram(o.dw.raw.line, uint64(ue.stmtList), ue.compDir, h.addrSize, o.dw.raw.str, o.dw.raw.lineStr)
					if err != nil {
						t.Fatalf("unit at %#x: %v", h.start, err)
					}
					return p
				}
				var all unitInfo
				if err := prog().decodeRows(&all, nil, nil); err != nil {
					t.Fatal(err)
				}
				var every []uint64
				for _, s := range all.seqs {
					for _, r := range s.rows {
						every = append(every, r.addr)
					}
				}
				slices.Sort(every)
				for _, want := range [][]uint64{pcs, {}, every} {
					var got, ref unitInfo
					if prog().decodeWanted(&got, want) {
						fast++
					} else if err := prog().decode(&got, want, nil); err != nil {
						t.Fatal(err)
					}
					if err := prog().decodeRows(&ref, want, nil); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got.files, ref.files) {
						t.Errorf("unit at %#x: files\n got %q\nwant %q", h.start, got.files, ref.files)
					}
					if d := diffSeqs(got.seqs, ref.seqs); d != "" {
						t.Errorf("unit at %#x, %d addresses: %s", h.start, len(want), d)
						for i := range got.seqs {
							if i < len(ref.seqs) && !reflect.DeepEqual(got.seqs[i], ref.seqs[i]) {
								t.Logf("got  %v\nwant %v", got.seqs[i].rows, ref.seqs[i].rows)
								break
							}
						}
					}
				}
			}
			if fast == 0 {
				t.Errorf("%s: decodeWanted decoded no unit", tc.path)
			}
		})
	}
}
