package engine

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// physicalMemory returns the machine's memory in bytes (0 if unknown).
var physicalMemory = func() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// dirtyLimit returns how many bytes of written data the kernel lets wait
// in the page cache before a writer must wait for the disk: vm.dirty_bytes,
// else vm.dirty_ratio percent of the machine's memory (an upper bound: the
// kernel takes the ratio of free and reclaimable memory only); 0 if
// unknown.
var dirtyLimit = func() int64 {
	read := func(name string) int64 {
		b, err := os.ReadFile("/proc/sys/vm/" + name)
		if err != nil {
			return 0
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0
		}
		return v
	}
	if v := read("dirty_bytes"); v > 0 {
		return v
	}
	return physicalMemory() * read("dirty_ratio") / 100
}
