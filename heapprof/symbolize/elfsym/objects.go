package elfsym

import (
	"debug/elf"
	"errors"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"
)

// ErrNoBuildID: an object's build-id is not known on this machine, so no
// debuginfod server can be asked for it (a jemalloc dump names files, not
// build-ids: the build-id is read from a local copy).
var ErrNoBuildID = errors.New("its build-id is unknown: no copy on this machine to read it from")

// Object is what this machine has for one mapped file of a profile.
type Object struct {
	// File is the mapped file as the profile names it.
	File string
	// Image is the local file read for it ("" when none was found).
	Image string
	// BuildID is the image's (or the mapping's) GNU build-id, or "".
	BuildID string
	// DebugInfo is whether DWARF is at hand: in the image, in a separate
	// debug file on this machine, or fetched.
	DebugInfo bool
	// Fetched is the debug file a debuginfod server supplied, or "".
	Fetched string
	// Err says why no debug file was fetched when one was wanted.
	Err error
}

// IsLibraryPath tells whether a mapped file is a shared library by
// jeprof's test (ParseLibraries); anything else is a program.
func IsLibraryPath(file string) bool { return soPattern.MatchString(file) }

// MainProgram is the profile's mapping of the main program: the first
// executable mapping of an absolute path that is not a shared library,
// or nil.
func MainProgram(p *profile.Profile) *profile.Mapping {
	for _, m := range p.Mapping {
		if strings.HasPrefix(m.File, "/") && !IsLibraryPath(m.File) {
			return m
		}
	}
	return nil
}

// FindInSearchPath looks for a mapped file under SearchPath only (never
// at its own path): DIR/<path>, then DIR/<path without leading
// directories>, down to DIR/<base name>; "" when absent.
func (l *Local) FindInSearchPath(file string) string {
	for suffix := file; ; {
		for _, dir := range l.SearchPath {
			if p := filepath.Join(dir, suffix); isFile(p) {
				return p
			}
		}
		i := strings.IndexByte(strings.TrimPrefix(suffix, "/"), '/')
		if !strings.HasPrefix(suffix, "/") || i < 0 {
			return ""
		}
		suffix = suffix[i+1:]
	}
}

// Objects lists, per mapped file of p, the local image Local reads for it
// and whether its DWARF is at hand, without opening anything into the
// cache.
func (l *Local) Objects(p *profile.Profile) []Object {
	prog, given := "", ""
	if l.Binary != "" {
		prog, given, _ = programPath(l.Binary)
	}
	seen := make(map[string]bool)
	var out []Object
	for _, m := range p.Mapping {
		if seen[m.File] {
			continue
		}
		seen[m.File] = true
		o := Object{File: m.File, BuildID: strings.ToLower(m.BuildID)}
		switch {
		case IsLibraryPath(m.File):
			o.Image = l.findLibrary(m.File, m.BuildID)
			if dbg := debuggingLibrary(o.Image); dbg != "" {
				o.Image, o.DebugInfo = dbg, true
			}
		case prog != "" && (m.File == prog || filepath.Base(m.File) == filepath.Base(prog) ||
			filepath.Base(m.File) == filepath.Base(given)):
			o.Image = prog
		default:
			if !strings.HasPrefix(m.File, "/") {
				continue // [vdso] and the like
			}
		}
		if o.Image != "" && !o.DebugInfo {
			o.BuildID, o.DebugInfo = l.debugInfoOf(o.Image, o.BuildID)
		}
		out = append(out, o)
	}
	return out
}

// debugInfoOf reads an image's build-id and tells whether it has DWARF or
// a separate debug file under the search path.
func (l *Local) debugInfoOf(path, id string) (string, bool) {
	f, err := elf.Open(path)
	if err != nil {
		return id, false
	}
	defer f.Close()
	if own := buildID(f); own != "" {
		id = own
	}
	if f.Section(".debug_info") != nil {
		return id, true
	}
	return id, findDebugFile(f, path, id, l.debugDirs()) != ""
}

// ForgetBuildID drops the images of build-id id from the cache, so the
// next open reads them again: a debuginfod client calls it once it has
// fetched a debug file for an image opened without one. Lookups running
// on the old image finish with it.
func (c *Cache) ForgetBuildID(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key := range c.objects {
		if strings.HasPrefix(key, "build-id:"+id+":") {
			delete(c.objects, key)
		}
	}
}
