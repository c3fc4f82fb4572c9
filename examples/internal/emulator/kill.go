package emulator

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Kill sends SIGKILL to every process running the executable at path, and
// returns how many it signalled. A crash test gives each test its own copy
// of the function binary (see [Binary.Copy]) so that this finds exactly
// that test's function, whichever emulator started it: the function
// process is a child of the emulator, started on the first invocation, and
// no pid is handed out. Linux only: it reads /proc.
func Kill(path string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == path {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}
