package nodetest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// nodeAt prefixes the child's line saying where its node listens.
const nodeAt = "node at "

// TestHelperNode is the child of TestDiesWithTestBinary: it starts a node,
// says where, and waits to be killed. Without helperEnv it does nothing.
func TestHelperNode(t *testing.T) {
	bin := os.Getenv(helperEnv)
	if bin == "" {
		return
	}
	var host string
	var port int
	if strings.HasSuffix(bin, "gonode") {
		host, port = StartGonode(t, bin)
	} else {
		host, port = StartJenode(t, bin, Jenode{})
	}
	fmt.Printf("%s%s\n", nodeAt, net.JoinHostPort(host, fmt.Sprint(port)))
	select {}
}

// A node dies with a test binary killed without running its cleanups (as
// a test timeout does), instead of living on and holding its port.
func TestDiesWithTestBinary(t *testing.T) {
	for _, bin := range []string{progs.Jenode, progs.Gonode} {
		t.Run(bin[strings.LastIndexByte(bin, '/')+1:], func(t *testing.T) {
			child := exec.Command(os.Args[0], "-test.run=^TestHelperNode$", "-test.timeout=2m")
			child.Env = append(os.Environ(), helperEnv+"="+bin)
			child.Stderr = os.Stderr
			out, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { child.Process.Kill(); child.Wait() }()
			var addr string
			for sc := bufio.NewScanner(out); addr == "" && sc.Scan(); {
				addr, _ = strings.CutPrefix(sc.Text(), nodeAt)
			}
			if addr == "" {
				t.Fatal("the child test binary did not start its node")
			}
			if c, err := net.Dial("tcp", addr); err != nil {
				t.Fatalf("node at %s does not answer: %v", addr, err)
			} else {
				c.Close()
			}
			child.Process.Kill()
			child.Wait()
			// The kernel kills the node at once; the minute only bounds a
			// failing run.
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					break
				}
				c.Close()
				if time.Now().After(deadline) {
					t.Fatalf("node at %s still answers after its test binary was killed", addr)
				}
			}
		})
	}
}
