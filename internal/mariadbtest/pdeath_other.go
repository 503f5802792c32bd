//go:build !linux

package mariadbtest

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal:
// Stop is then the only way the server ends.
func dieWithParent(*exec.Cmd) {}
