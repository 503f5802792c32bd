package sqlview

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd die with the test binary: one killed by its timeout
// runs no cleanup, and mariadbd would go on running.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
