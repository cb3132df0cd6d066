//go:build !unix

package stack

import (
	"os"
	"syscall"
)

// processGroupAttr returns no attributes where process groups are not
// available.
func processGroupAttr() *syscall.SysProcAttr { return nil }

// terminateGroup kills p; without process groups there is nothing gentler.
func terminateGroup(p *os.Process, _ bool) error { return p.Kill() }
