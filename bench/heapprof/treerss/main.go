// Command treerss runs a command and reports the peak memory of its whole
// process tree, sampled from /proc every millisecond: jeprof runs nm and
// addr2line beside its own Perl process, so the largest single process
// (what /usr/bin/time reports) understates what a jeprof run holds.
//
//	treerss [-o FILE] COMMAND [ARG...]
//
// It prints "tree_rss_kb=N tree_anon_kb=N max_process_rss_kb=N" to FILE
// (default stderr): the peak sum of VmRSS over the tree, the peak sum of
// RssAnon (private memory, without mapped files such as the program's own
// code), and the largest single VmRSS.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func main() {
	out := flag.String("o", "", "write the peaks to this file instead of stderr")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: treerss [-o FILE] COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "treerss:", err)
		os.Exit(1)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peakRSS, peakAnon, peakOne int64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var err error
loop:
	for {
		select {
		case err = <-done:
			break loop
		case <-tick.C:
			var rss, anon int64
			for _, pid := range tree(cmd.Process.Pid) {
				r, a := status(pid)
				rss += r
				anon += a
				peakOne = max(peakOne, r)
			}
			peakRSS, peakAnon = max(peakRSS, rss), max(peakAnon, anon)
		}
	}
	report := fmt.Sprintf("tree_rss_kb=%d tree_anon_kb=%d max_process_rss_kb=%d\n", peakRSS, peakAnon, peakOne)
	if *out == "" {
		fmt.Fprint(os.Stderr, report)
	} else if werr := os.WriteFile(*out, []byte(report), 0o644); werr != nil {
		fmt.Fprintln(os.Stderr, "treerss:", werr)
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "treerss:", err)
		os.Exit(1)
	}
}

// tree returns pid and its descendants (threads' children lists).
func tree(pid int) []int {
	pids := []int{pid}
	for i := 0; i < len(pids); i++ {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pids[i]))
		for _, t := range tasks {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pids[i], t.Name()))
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					pids = append(pids, c)
				}
			}
		}
	}
	return pids
}

// status returns a process's VmRSS and RssAnon in KiB (0 once it is gone).
func status(pid int) (rss, anon int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "RssAnon:":
			anon = v
		}
	}
	return rss, anon
}
