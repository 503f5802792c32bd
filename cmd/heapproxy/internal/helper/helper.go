// Package helper hands heapproxy's jeprof-like commands (heapproxy dot
// BINARY PROFILE, and text, folded, flamegraph, proto) to heapproxy-jeprof,
// the same commands (package jeprofcmd) linked without the server, when
// `make build` put one beside heapproxy. It runs from this package's init,
// about 1 ms into the process: Go initializes it right after os, before
// nearly every other package. The 95 MB server binary costs a command about
// 10 ms and 15 MB more than the 6 MB helper (the package inits before
// jeprofcmd's, and the pages of the large binary it touches; measured in
// bench/heapprof/README.md, session 9).
//
// A helper is used only if its Go build ID is the one recorded in this
// binary when both were built (BuildID), so an older or foreign file of
// that name never answers; without one, or if exec fails, the command runs
// in this process as before.
package helper

import (
	"os"
	"syscall"
)

// BuildID is the Go build ID (go tool buildid) of the heapproxy-jeprof
// built together with this binary, set by `make build` with -ldflags -X;
// empty in a plain go build, which then keeps its commands in-process.
var BuildID string

// Name is the helper's file name, in the directory of heapproxy's
// executable.
const Name = "heapproxy-jeprof"

// InProcessEnv, set to anything, keeps the commands in this process.
const InProcessEnv = "HEAPPROXY_INPROCESS"

// Commands are jeprofcmd's commands (TestHelperCommands keeps the two
// lists equal; this package must not import jeprofcmd, whose imports it
// would wait for).
func Commands() []string { return []string{"dot", "text", "folded", "flamegraph", "proto"} }

func init() {
	if BuildID == "" || len(os.Args) < 2 || os.Getenv(InProcessEnv) != "" || !isCommand(os.Args[1]) {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	// Not strings.LastIndexByte or filepath.Dir: with either import Go
	// initializes this package after some 80 others instead of right
	// after os.
	dir := len(exe)
	for dir > 0 && exe[dir-1] != '/' {
		dir--
	}
	path := exe[:dir] + Name
	if ReadBuildID(path) == BuildID {
		// Returns only if exec failed: the command then runs here.
		_ = syscall.Exec(path, os.Args, os.Environ())
	}
}

func isCommand(name string) bool {
	for _, c := range Commands() {
		if c == name {
			return true
		}
	}
	return false
}

// goNote is the head of the ELF note in which the Go linker records the
// build ID (what go tool buildid prints): name size 4, then after the
// description's size, type 4 (GO BUILDID) and the name "Go". Little-endian,
// as on every architecture heapproxy builds for.
const (
	goNoteName = "\x04\x00\x00\x00"
	goNoteType = "\x04\x00\x00\x00Go\x00\x00"
)

// ReadBuildID returns the Go build ID of the ELF executable at path, or ""
// when its first 64 KB hold none (the linker writes the note into the
// first page). It scans for the note rather than use debug/elf, whose
// imports (internal/zstd among them) would hold this package's init back.
func ReadBuildID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	b := buf[:n]
	head := len(goNoteName) + 4 + len(goNoteType)
	for i := 0; i+head <= len(b); i++ {
		if string(b[i:i+len(goNoteName)]) != goNoteName || string(b[i+8:i+head]) != goNoteType {
			continue
		}
		size := int(b[i+4]) | int(b[i+5])<<8 | int(b[i+6])<<16 | int(b[i+7])<<24
		if size <= 0 || i+head+size > len(b) {
			return ""
		}
		return string(b[i+head : i+head+size])
	}
	return ""
}
