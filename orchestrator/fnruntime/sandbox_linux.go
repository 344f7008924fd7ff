package fnruntime

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// isolation is how a function's process is set apart.
type isolation struct {
	network bool // a network namespace of its own
	root    bool // pvctl runs as root: the function runs as nobody
}

// apply sets the command's namespaces and user. As root: a new network
// namespace, user nobody. Otherwise: a new user namespace (pvctl's user
// mapped as its root, no rights outside it) holding the network namespace,
// as `unshare --map-root-user --net` makes.
func (iso isolation) apply(cmd *exec.Cmd) {
	a := cmd.SysProcAttr
	if iso.root {
		a.Credential = &syscall.Credential{Uid: nobody, Gid: nobody, NoSetGroups: false, Groups: []uint32{}}
		if iso.network {
			a.Cloneflags |= syscall.CLONE_NEWNET
		}
		return
	}
	if iso.network {
		a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
}

// setProcessGroup puts the command in a process group of its own, killed
// whole when the run is stopped, and killed with pvctl.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
}

// networkIsolationPossible: Linux can make network namespaces; whether
// this process may is known at the start (isolationRefused).
func networkIsolationPossible() bool { return true }

// isolationRefused is a start that failed because the namespaces were
// refused (user namespaces disabled, a seccomp profile, no CAP_SYS_ADMIN).
func isolationRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES)
}
