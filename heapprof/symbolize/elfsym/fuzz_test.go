package elfsym

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzImageEdits symbolizes a real program (inline.cc, g++ -g -O2: DWARF
// 5, inlined frames, C++ names) carrying the fuzzer's edits, as Symbolize
// does: open, prefetch (units decoded on goroutines of their own, where a
// panic would end the process, not the lookup), then the answers in
// batches. Debug files come from nodes and debuginfod servers, so any
// bytes must give an error or answers, never a panic or a hang.
//
// which picks the program (plain or zlib-compressed DWARF) and the part of
// the file edited: the debug sections, the symbol tables (.symtab, .strtab,
// .dynsym, .dynstr and the GNU version sections) or the section headers.
// Each 5 bytes of edits are one edit: a little-endian offset into that part
// and the byte written there.
func FuzzImageEdits(f *testing.F) {
	dir := f.TempDir()
	type span struct{ start, end int } // a range of the file
	type seedImage struct {
		image []byte
		parts []span // debug sections, symbol tables, section headers
		pcs   []uint64
	}
	var images []seedImage
	for i, flags := range [][]string{{"-gz=none"}, {"-gz=zlib"}} {
		bin := filepath.Join(dir, "inline"+string(rune('a'+i)))
		run(f, nil, "g++", append(flags, "-g", "-O2", "-o", bin, filepath.Join(progsDir(f), "inline.cc"), "-ljemalloc")...)
		image, err := os.ReadFile(bin)
		if err != nil {
			f.Fatal(err)
		}
		ef, err := elf.Open(bin)
		if err != nil {
			f.Fatal(err)
		}
		s := seedImage{image: image}
		debug, syms := span{len(image), 0}, span{len(image), 0}
		for _, sec := range ef.Sections {
			grow := func(p *span) {
				p.start = min(p.start, int(sec.Offset))
				p.end = max(p.end, int(sec.Offset+sec.FileSize))
			}
			switch {
			case strings.HasPrefix(sec.Name, ".debug_"):
				grow(&debug)
			case sec.Type == elf.SHT_SYMTAB || sec.Type == elf.SHT_DYNSYM || sec.Type == elf.SHT_STRTAB && sec.Name != ".shstrtab" ||
				sec.Type == elf.SHT_GNU_VERSYM || sec.Type == elf.SHT_GNU_VERNEED || sec.Type == elf.SHT_GNU_VERDEF:
				grow(&syms)
			}
		}
		// The section header table: e_shoff and e_shnum of an ELF64 header.
		shoff, shnum := int(binary.LittleEndian.Uint64(image[0x28:])), int(binary.LittleEndian.Uint16(image[0x3c:]))
		s.parts = []span{debug, syms, {shoff, shoff + 64*shnum}}
		text := ef.Section(".text")
		ef.Close()
		for _, p := range s.parts {
			if p.end <= p.start || p.end > len(image) {
				f.Fatalf("%s: a part to edit is empty or outside the file: %v", bin, s.parts)
			}
		}
		if text == nil {
			f.Fatalf("%s: no .text", bin)
		}
		for a := text.Addr; a < text.Addr+text.Size; a += 5 {
			s.pcs = append(s.pcs, a)
		}
		images = append(images, s)
	}
	for which := range 2 * 3 {
		f.Add(byte(which), []byte{})
	}
	f.Add(byte(0), []byte{4, 0, 0, 0, 0xff, 0x10, 0, 0, 0, 0x80})
	f.Add(byte(1), []byte{20, 0, 0, 0, 0x7f})
	f.Fuzz(func(t *testing.T, which byte, edits []byte) {
		s := images[int(which)%len(images)]
		part := s.parts[int(which)/len(images)%len(s.parts)]
		image := append([]byte(nil), s.image...)
		edited := len(edits) >= 5
		for ; len(edits) >= 5; edits = edits[5:] {
			off := int(binary.LittleEndian.Uint32(edits) % uint32(part.end-part.start))
			image[part.start+off] = edits[4]
		}
		path := filepath.Join(t.TempDir(), "image")
		if err := os.WriteFile(path, image, 0o755); err != nil {
			t.Fatal(err)
		}
		o, err := openObject(path, nil)
		if err != nil {
			return
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		o.prefetch(s.pcs, 0)
		seen := make(map[fnKey]bool)
		inlined := false // an inlined frame of inline.cc's, from its DWARF
		answer := func(pc uint64) {
			fr := o.jeprofFrames(pc, pc, seen)
			if len(fr) == 0 {
				t.Errorf("%#x: no frame (want a name or ??)", pc)
			}
			for _, j := range fr[:max(len(fr)-1, 0)] {
				inlined = inlined || strings.Contains(j.name, "make_column")
			}
		}
		if o.dw == nil {
			for _, pc := range s.pcs {
				answer(pc)
			}
		} else {
			o.dw.inBatches(s.pcs, 0, func(addr uint64) bool { _, ok := o.memo[addr]; return ok }, answer)
		}
		if !edited && !inlined {
			t.Error("the unedited program answered no inlined make_column frame: the harness reads no DWARF")
		}
	})
}

// FuzzDemangleSimple checks that what demangleSimple takes, it prints as
// the demangle package does (demangleTree, checked against nm --demangle
// and c++filt by TestDemangleCxxfilt).
func FuzzDemangleSimple(f *testing.F) {
	for _, s := range []string{
		"_ZN3ns14f311Ei", "_ZN3ns13BoxIlLi505EE4fillEi", "_ZNK3ns13BoxIiLin3EE3sumEv",
		"_ZN3ns15FlagsILb1ELj7ELl9ELm11EE5valueEi", "_ZN3ns15inner7CounterC2Ei", "_ZN3ns15inner7CounterD0Ev",
		"_ZN3ns14stepILi1EEEPvi", "_ZN3ns14convIcLb1EEEli", "_ZN3ns14ptrsEPKcPPcRiRKiOiPvPKvPKPi",
		"_ZN3ns17varargsEiz", "_Z9global_fnd", "_Z4stepILi2EEPvi", "_ZN3ns14wrapIiEEyT_",
		"_ZN3ns110counter_atILi0EEEPNS_5inner7CounterES3_", "_ZNK3ns14WrapINS0_IiEEE3getEv",
		"_ZN3ns15mergeERKNS_5inner7CounterEPS1_RKNS_3BoxIiLin3EEEPS6_", "_ZN9starrocks3foo3barERKNS_6StatusE",
		"_Z4take5OuterNS_2InE", "_Z1fP3FooNS_3BarE", "_Z1gI3FooEvS0_PKS0_",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, ok := demangleSimple(name)
		if !ok {
			return
		}
		want, err := demangleTree(name)
		if err != nil || got != want {
			t.Fatalf("demangleSimple(%q) = %q; the demangle package: %q, %v", name, got, want, err)
		}
	})
}
