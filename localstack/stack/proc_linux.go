package stack

import "syscall"

// processGroupAttr runs the child in its own process group, so Close can
// stop it with everything it spawned, and has the kernel kill it should
// this process die without calling Close.
func processGroupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
