//go:build !linux

package nodetest

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal:
// the test's cleanup is then the only way a node ends.
func dieWithParent(*exec.Cmd) {}
