//go:build unix

package stack

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// terminateGroup sends SIGTERM (or SIGKILL when kill is set) to the process
// group led by p.
func terminateGroup(p *os.Process, kill bool) error {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", p.Pid, err)
	}
	return nil
}
