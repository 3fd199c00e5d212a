//go:build unix

package events

import "syscall"

// cpuTime returns the CPU time the process has used, in nanoseconds. On a
// shared machine it is a steadier measure of a benchmark than the wall
// clock: time the process waits for a CPU does not count.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
