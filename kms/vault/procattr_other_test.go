//go:build !linux

package vault

import "os/exec"

// setDeathSignal does nothing here: TestMain stops the server.
func setDeathSignal(*exec.Cmd) {}
