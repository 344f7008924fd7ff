//go:build !linux

package fnruntime

import "os/exec"

// isolation is how a function's process is set apart: off Linux, pvctl
// cannot make a network namespace, so a function runs as an executable only
// with --allow-network.
type isolation struct {
	network bool
	root    bool
}

func (iso isolation) apply(cmd *exec.Cmd) {}

func setProcessGroup(cmd *exec.Cmd) {}

func networkIsolationPossible() bool { return false }

func isolationRefused(err error) bool { return false }
