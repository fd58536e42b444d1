//go:build unix

package engine

import "syscall"

// maxRSS returns getrusage's ru_maxrss for this process in bytes (Linux
// reports kB), or 0 when unknown.
func maxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024
}
