// Command symbench times package symbolize (cold and warm cache) against
// jeprof's own symbolization (jeprof --raw runs nm and addr2line and prints
// its symbol table) on the same binary and heap profile.
//
//	go run ./bench/heapprof/symbench BINARY PROFILE
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
	dump := flag.String("dump", "", "write every location's frames after the cold pass to this file (to diff two versions)")
	dot := flag.Bool("dot", false, "time the whole pipeline (heapprof.Parse, Symbolize, WriteDOT) instead of Symbolize alone")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: symbench [-cpuprofile FILE] BINARY PROFILE")
		os.Exit(2)
	}
	bin, prof := flag.Arg(0), flag.Arg(1)
	cache := symbolize.NewCache()
	l := &symbolize.Local{Binary: bin, Cache: cache}
	passes := []string{"cold"}
	if *warm {
		for i := 1; i < *warmRuns; i++ {
			passes = append(passes, "warm-extra")
		}
		passes = append(passes, "warm")
	}
	for _, pass := range passes {
		start0 := time.Now()
		var p *profile.Profile
		var err error
		p, err = parseHeap(prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if pass == *cpuPass && *cpuProfile != "" {
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
		start, cpu0 := time.Now(), cpuTime()
		if err := l.Symbolize(context.Background(), p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		symbolized := time.Now()
		if pass == "cold" && *dump != "" {
			if err := writeFrames(*dump, p); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		if *dot {
			opt := heapprof.DefaultOptions()
			opt.Program = bin
			if err := heapprof.WriteDOT(io.Discard, p, opt); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Printf("pipeline %s: parse %v, symbolize %v, dot %v\n", pass, start.Sub(start0).Round(time.Millisecond),
				symbolized.Sub(start).Round(time.Millisecond), time.Since(symbolized).Round(time.Millisecond))
			// For bench/heapprof/run.sh: milliseconds, whole pipeline and symbolization alone.
			fmt.Printf("RESULT %s total_ms=%.1f symbolize_ms=%.1f\n", pass, ms(time.Since(start0)), ms(symbolized.Sub(start)))
		}
		if pass == *cpuPass && *cpuProfile != "" {
			pprof.StopCPUProfile()
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
		fmt.Printf("symbolize %s: wall %v, cpu %v, %d PCs (heap in use %d MB)\n", pass,
			time.Since(start).Round(time.Millisecond), (cpuTime() - cpu0).Round(time.Millisecond), len(p.Location), ms.HeapInuse>>20)
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
