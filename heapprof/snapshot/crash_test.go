package snapshot

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash tests re-execute the test binary as a child that saves into a
// Dir, kill it with SIGKILL at chosen or random moments, and check what a
// fresh OpenDir finds.
const (
	crashChildEnv = "HEAPPROXY_SNAPSHOT_CRASH_CHILD" // the child's mode
	crashDirEnv   = "HEAPPROXY_SNAPSHOT_CRASH_DIR"
	crashBinEnv   = "HEAPPROXY_SNAPSHOT_CRASH_BIN"
	crashHeapEnv  = "HEAPPROXY_SNAPSHOT_CRASH_HEAP"
	crashNode     = 7
)

// padRaw makes a snapshot's raw bytes: the real dump followed by bytes
// drawn from a generator seeded with the id, up to size bytes, so each
// snapshot's content is known from its id alone, and a save takes long
// enough to be interrupted (random bytes do not shrink when the store
// gzips the dump).
func padRaw(raw []byte, id string, size int) []byte {
	out := append([]byte(nil), raw...)
	if len(out) >= size {
		return out
	}
	pad := make([]byte, size-len(out))
	rand.NewChaCha8(sha256.Sum256([]byte(id))).Read(pad)
	return append(out, pad...)
}

// crashSnap is the snapshot the child saves under id at time at.
func crashSnap(r realRows, id string, at time.Time, size int) (*Snapshot, []Function, []Stack) {
	s, funcs, stacks := snapFrom(r, crashNode, at)
	s.ID = id
	s.Raw = padRaw(r.raw, id, size)
	return s, funcs, stacks
}

const (
	smallRaw = 0       // just the dump
	loopRaw  = 2 << 20 // a few ms of writing
	bigRaw   = 4 << 20 // above the child's file size limit in mode "fsize"
)

// crashChild is the child's main: it returns the exit code.
func crashChild() int {
	mode := os.Getenv(crashChildEnv)
	fail := func(err error) int {
		fmt.Printf("fail %v\n", err)
		return 1
	}
	r, err := loadRows(os.Getenv(crashBinEnv), os.Getenv(crashHeapEnv))
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	var st Store
	var d *Dir
	if mode == "mysql-loop" {
		st, err = OpenMySQL(ctx, os.Getenv(crashDirEnv), Retention{})
	} else {
		d, err = OpenDir(os.Getenv(crashDirEnv), Retention{})
		st = d
	}
	if err != nil {
		return fail(err)
	}
	save := func(size int) (string, error) {
		at := time.Now().UTC().Truncate(time.Microsecond)
		s, funcs, stacks := crashSnap(r, NewID(crashNode, at), at, size)
		fmt.Printf("saving %s\n", s.ID)
		return s.ID, st.Save(ctx, s, funcs, stacks)
	}
	switch mode {
	case "wrote-raw", "before-rename", "after-rename":
		for i := 0; i < 2; i++ {
			id, err := save(smallRaw)
			if err != nil {
				return fail(err)
			}
			fmt.Printf("saved %s\n", id)
		}
		d.testHook = func(stage string) {
			if stage == mode {
				fmt.Printf("stopped %s\n", stage)
				select {} // wait for SIGKILL
			}
		}
		if _, err := save(smallRaw); err != nil {
			return fail(err)
		}
		return fail(errors.New("hook not reached"))
	case "loop", "mysql-loop":
		for {
			id, err := save(loopRaw)
			if err != nil {
				return fail(err)
			}
			fmt.Printf("saved %s\n", id)
		}
	case "background-loop":
		// Snapshots queued faster than they are written: the queue is
		// full most of the time, with saves running on every worker.
		for {
			at := time.Now().UTC().Truncate(time.Microsecond)
			s, funcs, stacks := crashSnap(r, NewID(crashNode, at), at, loopRaw)
			id := s.ID
			err := d.SaveBackground(ctx, s, func(context.Context, *Snapshot) ([]Function, []Stack, error) {
				return funcs, stacks, nil
			}, func(err error) {
				if err != nil {
					fmt.Printf("fail %v\n", err)
					return
				}
				fmt.Printf("saved %s\n", id)
			})
			if err != nil {
				return fail(err)
			}
			fmt.Printf("queued %s\n", id)
		}
	case "fsize":
		id, err := save(smallRaw)
		if err != nil {
			return fail(err)
		}
		fmt.Printf("saved %s\n", id)
		// Go ignores SIGXFSZ, so writing past the limit fails with EFBIG
		// like a full disk fails with ENOSPC.
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			return fail(err)
		}
		lim.Cur = 1 << 20
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			return fail(err)
		}
		id, err = save(bigRaw)
		fmt.Printf("big-save %v\n", err)
		tmp, _ := os.ReadDir(filepath.Join(os.Getenv(crashDirEnv), "tmp"))
		fmt.Printf("tmp-entries %d\n", len(tmp))
		if _, err := d.Get(ctx, id); err == nil {
			return fail(fmt.Errorf("failed save %s is readable", id))
		}
		if id, err = save(smallRaw); err != nil {
			return fail(err)
		}
		fmt.Printf("saved %s\n", id)
		return 0
	}
	return fail(fmt.Errorf("unknown mode %q", mode))
}

// child is a running crash child.
type child struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{} // closed when the child's stdout is at EOF
}

func startChild(t *testing.T, mode, dir string) *child {
	t.Helper()
	bin, heaps := leakProg(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+mode, crashDirEnv+"="+dir,
		crashBinEnv+"="+bin, crashHeapEnv+"="+heaps[0])
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 1<<16), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		close(c.done)
	}()
	t.Cleanup(func() { c.kill() })
	return c
}

// next returns the child's next output line ("" once it has exited).
func (c *child) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-c.lines:
		if strings.HasPrefix(l, "fail ") {
			t.Fatalf("child: %s", l)
		}
		return l
	case <-time.After(2 * time.Minute):
		t.Fatal("child printed nothing for 2 minutes")
	}
	return ""
}

// kill sends SIGKILL and waits until the child is gone and everything it
// printed is in c.lines (Wait must not close the pipe before that).
func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.done
		_ = c.cmd.Wait()
	}
}

// checkAfterCrash opens dir as a restarted proxy would and checks that
// every snapshot listed is complete and that tmp/ is empty; it returns the
// listed ids and how many leftovers of interrupted saves tmp/ held.
func checkAfterCrash(t *testing.T, dir string, size int) ([]string, int) {
	t.Helper()
	before, _ := os.ReadDir(filepath.Join(dir, "tmp"))
	d, err := OpenDir(dir, Retention{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer d.Close()
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Errorf("tmp/ not cleaned at open: %d entries", len(left))
	}
	if dm := d.Damaged(); len(dm) != 0 {
		t.Errorf("damaged snapshots after a kill: %q", dm)
	}
	list, err := d.List(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	r := leakRows(t)
	var ids []string
	for _, m := range list {
		want, funcs, stacks := crashSnap(r, m.ID, m.TakenAt, size)
		checkSnapshot(t, d, want, funcs, stacks)
		ids = append(ids, m.ID)
	}
	return ids, len(before)
}

// TestDirKilledAtEachStage kills the saving process at fixed points of
// Save: the snapshot in flight is either absent or complete.
func TestDirKilledAtEachStage(t *testing.T) {
	for _, c := range []struct {
		stage    string
		inFlight bool // the interrupted snapshot is expected in the store
	}{
		{"wrote-raw", false},
		{"before-rename", false},
		{"after-rename", true},
	} {
		t.Run(c.stage, func(t *testing.T) {
			dir := t.TempDir()
			ch := startChild(t, c.stage, dir)
			var saved []string
			var inFlight string
			for {
				l := ch.next(t)
				if id, ok := strings.CutPrefix(l, "saving "); ok {
					inFlight = id
				} else if id, ok := strings.CutPrefix(l, "saved "); ok {
					saved = append(saved, id)
				} else if strings.HasPrefix(l, "stopped ") {
					break
				} else {
					t.Fatalf("child said %q", l)
				}
			}
			// The child is blocked inside Save; a kill -9 now is a crash
			// at exactly that point.
			ch.kill()
			ids, left := checkAfterCrash(t, dir, smallRaw)
			if wantLeft := map[bool]int{false: 1, true: 0}[c.inFlight]; left != wantLeft {
				t.Errorf("tmp/ held %d entries after the kill, want %d", left, wantLeft)
			}
			want := append([]string(nil), saved...)
			if c.inFlight {
				want = append(want, inFlight)
			}
			if !sameSet(ids, want) {
				t.Errorf("after kill at %s: store has %q, want %q", c.stage, ids, want)
			}
		})
	}
}

// TestDirKilledAnywhere kills a child that saves in a loop at random
// moments, several times on one directory.
func TestDirKilledAnywhere(t *testing.T) {
	dir := t.TempDir()
	var all []string
	for round := 0; round < 4; round++ {
		ch := startChild(t, "loop", dir)
		var saved []string
		for len(saved) < 2 {
			if id, ok := strings.CutPrefix(ch.next(t), "saved "); ok {
				saved = append(saved, id)
			}
		}
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		ch.kill()
		for l := range ch.lines { // what it printed before dying
			if id, ok := strings.CutPrefix(l, "saved "); ok {
				saved = append(saved, id)
			}
		}
		all = append(all, saved...)
		ids, left := checkAfterCrash(t, dir, loopRaw)
		t.Logf("round %d: %d snapshots, %d leftovers of an interrupted save", round, len(ids), left)
		// Every save that returned is there; at most one more (renamed
		// but killed before it could print) may be.
		for _, id := range all {
			if !contains(ids, id) {
				t.Errorf("round %d: saved snapshot %s missing", round, id)
			}
		}
		if len(ids) > len(all)+1 {
			t.Errorf("round %d: %d snapshots, %d saves returned", round, len(ids), len(all))
		}
		all = ids
	}
}

// TestDirKilledWhileSavingInBackground kills a child whose saves run on
// the background queue (several at once) at random moments: every save
// reported done is there, nothing else but whole snapshots that were
// queued, and no half snapshot.
func TestDirKilledWhileSavingInBackground(t *testing.T) {
	dir := t.TempDir()
	var all []string
	for round := 0; round < 4; round++ {
		ch := startChild(t, "background-loop", dir)
		var saved, queued []string
		for len(saved) < 2 {
			l := ch.next(t)
			if id, ok := strings.CutPrefix(l, "saved "); ok {
				saved = append(saved, id)
			} else if id, ok := strings.CutPrefix(l, "queued "); ok {
				queued = append(queued, id)
			}
		}
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		ch.kill()
		for l := range ch.lines {
			if id, ok := strings.CutPrefix(l, "saved "); ok {
				saved = append(saved, id)
			} else if id, ok := strings.CutPrefix(l, "queued "); ok {
				queued = append(queued, id)
			}
		}
		ids, left := checkAfterCrash(t, dir, loopRaw) // each listed one whole
		t.Logf("round %d: %d snapshots, %d saved, %d queued, %d leftovers of interrupted saves", round, len(ids), len(saved), len(queued), left)
		for _, id := range append(all, saved...) {
			if !contains(ids, id) {
				t.Errorf("round %d: saved snapshot %s missing", round, id)
			}
		}
		for _, id := range ids {
			if !contains(all, id) && !contains(queued, id) {
				t.Errorf("round %d: snapshot %s was never queued", round, id)
			}
		}
		all = ids
	}
}

// TestDirFullDisk runs a save into a file size limit (the same write error
// a full disk gives): Save fails, nothing of it remains, the store goes on.
func TestDirFullDisk(t *testing.T) {
	dir := t.TempDir()
	ch := startChild(t, "fsize", dir)
	var saved []string
	var bigErr string
	tmpEntries := "?"
	for l := ch.next(t); l != ""; l = ch.next(t) {
		switch {
		case strings.HasPrefix(l, "saved "):
			saved = append(saved, strings.TrimPrefix(l, "saved "))
		case strings.HasPrefix(l, "big-save "):
			bigErr = strings.TrimPrefix(l, "big-save ")
		case strings.HasPrefix(l, "tmp-entries "):
			tmpEntries = strings.TrimPrefix(l, "tmp-entries ")
		}
	}
	<-ch.done
	if err := ch.cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(bigErr, "file too large") || !strings.Contains(bigErr, "write raw") {
		t.Errorf("save above the limit: %q, want a write error naming the file", bigErr)
	}
	if tmpEntries != "0" {
		t.Errorf("failed save left %s entries in tmp/", tmpEntries)
	}
	if ids, _ := checkAfterCrash(t, dir, smallRaw); !sameSet(ids, saved) || len(saved) != 2 {
		t.Errorf("store has %q, want the two small saves %q", ids, saved)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !contains(b, x) {
			return false
		}
	}
	return true
}

// TestMySQLKilledAnywhere kills a child saving into MySQL at random
// moments: the server rolls the open transaction back, every snapshot
// listed is complete and no row is left without its snapshot.
func TestMySQLKilledAnywhere(t *testing.T) {
	dsn := mariaDSN(t, "new")
	var all []string
	for round := 0; round < 3; round++ {
		ch := startChild(t, "mysql-loop", dsn)
		var saved []string
		for len(saved) < 2 {
			if id, ok := strings.CutPrefix(ch.next(t), "saved "); ok {
				saved = append(saved, id)
			}
		}
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		ch.kill()
		for l := range ch.lines {
			if id, ok := strings.CutPrefix(l, "saved "); ok {
				saved = append(saved, id)
			}
		}
		all = append(all, saved...)
		m, err := OpenMySQL(context.Background(), dsn, Retention{})
		if err != nil {
			t.Fatal(err)
		}
		list, err := m.List(context.Background(), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, meta := range list {
			want, funcs, stacks := crashSnap(leakRows(t), meta.ID, meta.TakenAt, loopRaw)
			checkSnapshot(t, m, want, funcs, stacks)
			ids = append(ids, meta.ID)
		}
		for _, id := range all {
			if !contains(ids, id) {
				t.Errorf("round %d: saved snapshot %s missing", round, id)
			}
		}
		if len(ids) > len(all)+1 {
			t.Errorf("round %d: %d snapshots, %d saves returned", round, len(ids), len(all))
		}
		checkRowCounts(t, m.DB(), len(ids))
		m.Close()
		all = ids
	}
}
