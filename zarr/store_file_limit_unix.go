//go:build unix

package zarr

import "syscall"

// openFilesLimit returns the process's soft limit of open files
// (RLIMIT_NOFILE), or 1<<16 when unknown or unlimited.
func openFilesLimit() int64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > 1<<30 {
		return 1 << 16
	}
	return int64(lim.Cur)
}
