// Command snapcost measures what storing one snapshot costs, part by part
// (raw dump, pprof protobuf, function and stack rows), in bytes and CPU,
// with each compressor the store could use, and the whole Attach + Dir.Save
// of the current code against the capture's own CPU (parse, symbolize,
// render).
//
//	go run ./bench/snapshot/snapcost [-runs 5] BIN PROF
//
// It prints one markdown table; every figure is the median of -runs.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

func main() {
	runs := flag.Int("runs", 5, "runs per measurement (median)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: snapcost [-runs N] BIN PROF")
		os.Exit(2)
	}
	if err := run(*runs, flag.Arg(0), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "snapcost:", err)
		os.Exit(1)
	}
}

// cpu is the process's user+system CPU time.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs f n times and returns the median CPU and wall time and f's
// last size.
func measure(n int, f func() (int, error)) (cpuT, wall time.Duration, size int, err error) {
	var cs, ws []time.Duration
	for range n {
		runtime.GC()
		c0, w0 := cpu(), time.Now()
		if size, err = f(); err != nil {
			return 0, 0, 0, err
		}
		cs, ws = append(cs, cpu()-c0), append(ws, time.Since(w0))
	}
	slices.Sort(cs)
	slices.Sort(ws)
	return cs[len(cs)/2], ws[len(ws)/2], size, nil
}

type compressor struct {
	name string
	wrap func(io.Writer) (io.WriteCloser, error)
}

func compressors() []compressor {
	return []compressor{
		{"none", func(w io.Writer) (io.WriteCloser, error) { return nopCloser{w}, nil }},
		{"compress/gzip BestSpeed", func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, gzip.BestSpeed) }},
		{"compress/gzip default (6)", func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, gzip.DefaultCompression) }},
		{"klauspost gzip BestSpeed", func(w io.Writer) (io.WriteCloser, error) { return kgzip.NewWriterLevel(w, kgzip.BestSpeed) }},
		{"klauspost gzip default", func(w io.Writer) (io.WriteCloser, error) { return kgzip.NewWriterLevel(w, kgzip.DefaultCompression) }},
		{"klauspost zstd fastest", func(w io.Writer) (io.WriteCloser, error) {
			return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		}},
		{"klauspost zstd default", func(w io.Writer) (io.WriteCloser, error) {
			return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		}},
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func compress(c compressor, b []byte) (int, error) {
	var out bytes.Buffer
	w, err := c.wrap(&out)
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(b); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return out.Len(), nil
}

func jsonLines[T any](rows []T) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func run(n int, bin, prof string) error {
	ctx := context.Background()
	raw, err := os.ReadFile(prof)
	if err != nil {
		return err
	}
	l := &symbolize.Local{Binary: bin, Cache: symbolize.NewCache()}
	var p *profile.Profile
	pipeline := func() (int, error) {
		if p, err = heapprof.ParseLimit(ctx, raw, 0); err != nil {
			return 0, err
		}
		return 0, l.Symbolize(ctx, p)
	}
	if _, err := pipeline(); err != nil { // cold: opens the binary
		return err
	}
	pipeCPU, pipeWall, _, err := measure(n, pipeline)
	if err != nil {
		return err
	}
	dotCPU, dotWall, dotSize, err := measure(n, func() (int, error) {
		var b bytes.Buffer
		err := heapprof.WriteDOTContext(ctx, &b, p, heapprof.DefaultOptions())
		return b.Len(), err
	})
	if err != nil {
		return err
	}
	var pb bytes.Buffer
	if err := p.WriteUncompressed(&pb); err != nil {
		return err
	}
	var funcs []snapshot.Function
	var stacks []snapshot.Stack
	sumCPU, _, _, err := measure(n, func() (int, error) {
		_, funcs, stacks = snapshot.Summarize(p)
		return 0, nil
	})
	if err != nil {
		return err
	}
	fj, err := jsonLines(funcs)
	if err != nil {
		return err
	}
	sj, err := jsonLines(stacks)
	if err != nil {
		return err
	}
	jsonCPU, _, _, err := measure(n, func() (int, error) {
		a, err := jsonLines(funcs)
		if err != nil {
			return 0, err
		}
		b, err := jsonLines(stacks)
		return len(a) + len(b), err
	})
	if err != nil {
		return err
	}
	fmt.Printf("### %s: %d bytes raw, %d stacks; %d CPU(s), %s\n\n", prof, len(raw), len(p.Sample), runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("Capture (warm, medians of %d): parse + symbolize %s ms CPU (%s ms wall); DOT render %s ms CPU (%s ms wall, %d bytes); Summarize (rows) %s ms CPU; rows as JSON lines %s ms CPU (%d + %d bytes)\n\n",
		n, ms(pipeCPU), ms(pipeWall), ms(dotCPU), ms(dotWall), dotSize, ms(sumCPU), ms(jsonCPU), len(fj), len(sj))
	fmt.Println("| part | compressor | bytes | ratio | CPU ms | MB/s |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for _, part := range []struct {
		name string
		b    []byte
	}{{"raw dump", raw}, {"protobuf", pb.Bytes()}, {"function rows (JSON)", fj}, {"stack rows (JSON)", sj}} {
		for _, c := range compressors() {
			cc, _, size, err := measure(n, func() (int, error) { return compress(c, part.b) })
			if err != nil {
				return fmt.Errorf("%s with %s: %w", part.name, c.name, err)
			}
			fmt.Printf("| %s | %s | %d | %.1f | %s | %.0f |\n", part.name, c.name, size, float64(len(part.b))/float64(size), ms(cc),
				float64(len(part.b))/1e6/max(cc.Seconds(), 1e-6))
		}
	}
	// The whole store step of the current code: Attach (protobuf, totals,
	// rows) and Dir.Save (compress, write, fsync), on a fresh directory.
	dir, err := os.MkdirTemp("", "snapcost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	d, err := snapshot.OpenDir(dir, snapshot.Retention{PerNode: 3})
	if err != nil {
		return err
	}
	defer d.Close()
	var attachCPU, saveCPU, saveWall []time.Duration
	for i := range n {
		s := &snapshot.Snapshot{ID: snapshot.NewID(1, time.Now()), NodeID: 1, TakenAt: time.Now().Add(time.Duration(i)), Format: "jemalloc", Raw: raw}
		runtime.GC()
		c0 := cpu()
		f, st, err := s.Attach(p)
		if err != nil {
			return err
		}
		c1, w1 := cpu(), time.Now()
		if err := d.Save(ctx, s, f, st); err != nil {
			return err
		}
		attachCPU, saveCPU, saveWall = append(attachCPU, c1-c0), append(saveCPU, cpu()-c1), append(saveWall, time.Since(w1))
	}
	for _, s := range [][]time.Duration{attachCPU, saveCPU, saveWall} {
		slices.Sort(s)
	}
	sz := func(name string) int64 {
		var total int64
		ents, _ := os.ReadDir(dir + "/snapshots")
		for _, e := range ents[:1] {
			if st, err := os.Stat(dir + "/snapshots/" + e.Name() + "/" + name); err == nil {
				total += st.Size()
			}
		}
		return total
	}
	fmt.Printf("\nStore step of this build (median of %d): Attach %s ms CPU, Dir.Save %s ms CPU, %s ms wall; on disk raw.gz %d, profile.pb.gz %d, functions %d, stacks %d bytes\n",
		n, ms(attachCPU[n/2]), ms(saveCPU[n/2]), ms(saveWall[n/2]), sz("raw.gz"), sz("profile.pb.gz"), sz("functions.jsonl.gz"), sz("stacks.jsonl.gz"))
	return nil
}
