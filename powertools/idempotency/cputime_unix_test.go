//go:build unix

package idempotency_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, user and system.
// Benchmarks report it per operation as well as wall time because a
// loaded machine (CI, or other builds on a 2-core box) inflates ns/op
// several times over while barely moving CPU time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
