package fnworker

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts a worker in a process group of its own, killed with
// pvctl (its parent's death signal).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
