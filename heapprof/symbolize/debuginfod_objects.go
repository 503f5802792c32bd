package symbolize

import (
	"context"
	"errors"
	"sync"

	"github.com/google/pprof/profile"
)

// Prefetch fetches, for every object of p that Local reads without DWARF
// (a stripped program or library) or cannot find at all while its build-id
// is known, its debug file from the servers into the cache, so that l, with
// d.Dir() in its SearchPath, reads it. It returns every object with what
// happened; a failed fetch is the object's Err, not an error of the call.
func (d *Debuginfod) Prefetch(ctx context.Context, l *Local, p *profile.Profile) []Object {
	objs := l.Objects(p)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range objs {
		o := &objs[i]
		if o.DebugInfo {
			continue
		}
		if o.BuildID == "" {
			o.Err = ErrNoBuildID
			continue
		}
		if o.Image == "" && !IsLibraryPath(o.File) {
			// Local finds a library by build-id in the cache, but a
			// program only by name (jeprof's command line).
			o.Err = errors.New("a program is read from the binary configured or found under symbol_path, and there is none")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			o.Fetched, o.Err = d.Fetch(ctx, o.BuildID)
			if o.Err == nil {
				o.DebugInfo = true
				if l.Cache != nil {
					l.Cache.ForgetBuildID(o.BuildID)
				}
			}
		}()
	}
	wg.Wait()
	return objs
}
