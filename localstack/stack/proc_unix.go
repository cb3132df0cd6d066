//go:build unix && !linux

package stack

import "syscall"

// processGroupAttr runs the child in its own process group, so Close can
// stop it with everything it spawned.
func processGroupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
