package vault

import (
	"os/exec"
	"syscall"
)

// setDeathSignal kills the server when the test binary dies first.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
