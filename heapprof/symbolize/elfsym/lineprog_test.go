package elfsym

import (
	"fmt"
	"reflect"
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
			o, err := openObject(tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if o.dw == nil || o.dw.raw == nil {
				t.Fatalf("%s: no mapped DWARF", tc.path)
			}
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
