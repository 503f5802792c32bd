// Command symbench times package symbolize (cold and warm cache) against
// jeprof's own symbolization (jeprof --raw runs nm and addr2line and prints
// its symbol table) on the same binary and heap profile.
//
//	go run ./bench/heapprof/symbench BINARY PROFILE
//
// With -dot it runs heapproxy dot's pipeline (heapprof.ParseDump,
// Symbolize of the Dump's Profile, Dump.WriteDOT) one stage after the
// other; -coldruns N repeats the cold pass N times with a
// fresh cache, and a CPU profile (-cpuprofile) is labelled by stage
// (go tool pprof -tagfocus phase=symbolize).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

func main() {
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of one pass (-cpupass) to this file")
	cpuPass := flag.String("cpupass", "cold", "the pass -cpuprofile covers: cold or warm")
	runJeprof := flag.Bool("jeprof", true, "also time jeprof --raw")
	warm := flag.Bool("warm", true, "after the cold pass, time a warm one (same cache)")
	warmRuns := flag.Int("warmruns", 1, "warm passes (the last one is reported and profiled with -cpupass warm)")
	memProfile := flag.String("memprofile", "", "write a heap profile after the cold pass to this file (the cache still in use)")
	memRate := flag.Int("memprofilerate", 0, "runtime.MemProfileRate for -memprofile (0: Go's default); its alloc_space counts every pass before")
	dump := flag.String("dump", "", "write every location's frames after the cold pass to this file (to diff two versions)")
	dot := flag.Bool("dot", false, "time heapproxy dot's pipeline (heapprof.ParseDump, Symbolize, Dump.WriteDOT) instead of Symbolize alone")
	coldRuns := flag.Int("coldruns", 1, "cold passes, each with a fresh cache (the last one is reported; -cpupass cold profiles them all)")
	flag.Parse()
	if *memRate > 0 {
		runtime.MemProfileRate = *memRate
	}
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: symbench [-cpuprofile FILE] BINARY PROFILE")
		os.Exit(2)
	}
	bin, prof := flag.Arg(0), flag.Arg(1)
	cache := symbolize.NewCache() // the cold pass's, which the warm passes reuse
	l := &symbolize.Local{Binary: bin, Cache: cache}
	passes := []string{"cold"}
	for i := 1; i < *coldRuns; i++ {
		passes = append([]string{"cold-extra"}, passes...)
	}
	if *warm {
		for i := 1; i < *warmRuns; i++ {
			passes = append(passes, "warm-extra")
		}
		passes = append(passes, "warm")
	}
	profiling := false
	for i, pass := range passes {
		l.Cache = cache
		if pass == "cold-extra" {
			// A fresh cache: every cold pass reads the images again.
			l.Cache = symbolize.NewCache()
		}
		start0 := time.Now()
		var p *profile.Profile
		var d *heapprof.Dump
		var err error
		pprof.Do(context.Background(), pprof.Labels("phase", "parse"), func(ctx context.Context) {
			if *dot {
				// As heapproxy dot reads it: the stacks collected for
				// the renderer, no samples.
				if d, err = parseDump(ctx, prof); err == nil {
					p = d.Profile()
				}
				return
			}
			p, err = parseHeap(prof)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if !profiling && strings.HasPrefix(pass, *cpuPass) && *cpuProfile != "" {
			profiling = true
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		var ms0 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		start, cpu0 := time.Now(), cpuTime()
		// Labelled, so a CPU profile of several passes can be cut by stage
		// (go tool pprof -tagfocus phase=symbolize).
		pprof.Do(context.Background(), pprof.Labels("phase", "symbolize"), func(ctx context.Context) {
			err = l.Symbolize(ctx, p)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		symbolized := time.Now()
		var ms1 runtime.MemStats
		runtime.ReadMemStats(&ms1)
		if pass == "cold" && *dump != "" {
			if err := writeFrames(*dump, p); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		if *dot {
			opt := heapprof.DefaultOptions()
			opt.Program = bin
			pprof.Do(context.Background(), pprof.Labels("phase", "dot"), func(ctx context.Context) {
				err = d.WriteDOT(ctx, io.Discard, opt)
			})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Printf("pipeline %s: parse %v, symbolize %v, dot %v\n", pass, start.Sub(start0).Round(time.Millisecond),
				symbolized.Sub(start).Round(time.Millisecond), time.Since(symbolized).Round(time.Millisecond))
			// For bench/heapprof/run.sh: milliseconds, whole pipeline and symbolization alone.
			fmt.Printf("RESULT %s total_ms=%.1f symbolize_ms=%.1f\n", pass, ms(time.Since(start0)), ms(symbolized.Sub(start)))
		}
		if profiling && (i+1 == len(passes) || !strings.HasPrefix(passes[i+1], *cpuPass)) {
			pprof.StopCPUProfile()
			profiling = false
		}
		if pass == "cold" && *memProfile != "" {
			f, err := os.Create(*memProfile)
			if err == nil {
				runtime.GC()
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("symbolize %s: wall %v, cpu %v, %d PCs (heap in use %d MB, %d MB allocated)\n", pass,
			time.Since(start).Round(time.Millisecond), (cpuTime() - cpu0).Round(time.Millisecond), len(p.Location), ms.HeapInuse>>20,
			(ms1.TotalAlloc-ms0.TotalAlloc)>>20)
	}
	if !*runJeprof {
		return
	}
	start, cpu0 := time.Now(), childCPUTime()
	out, _ := exec.Command("jeprof", "--raw", bin, prof).Output()
	fmt.Printf("jeprof --raw (nm + addr2line): wall %v, cpu %v, %d symbol lines\n", time.Since(start).Round(time.Millisecond),
		(childCPUTime() - cpu0).Round(time.Millisecond), strings.Count(string(out), "\n0x"))
}

// writeFrames writes one line per location: its address and frames.
func writeFrames(path string, p *profile.Profile) error {
	var b strings.Builder
	for _, loc := range p.Location {
		fmt.Fprintf(&b, "%#x", loc.Address)
		for _, l := range loc.Line {
			fmt.Fprintf(&b, " | %s %s:%d", l.Function.SystemName, l.Function.Filename, l.Line)
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuTime is this process's user+system CPU time; on a shared machine it
// is a steadier measure than wall time.
func cpuTime() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// childCPUTime is the CPU time of waited-for children (jeprof, nm, addr2line).
func childCPUTime() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// parseHeap reads the profile with package heapprof, streamed as
// heapproxy dot reads it (so the cold pass's peak memory is comparable).
func parseHeap(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return heapprof.ParseReader(f)
}

// parseDump reads the profile as heapproxy dot does: streamed, as a
// heapprof.Dump.
func parseDump(ctx context.Context, path string) (*heapprof.Dump, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return heapprof.ParseDump(ctx, f, heapprof.MaxProfileBytes)
}
