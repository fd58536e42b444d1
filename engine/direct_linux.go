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

// dirtyFreerun returns how many bytes of written data the kernel lets
// wait in the page cache before it paces writers to the disk's speed
// (freerun, from vm.dirty_bytes or vm.dirty_ratio and
// vm.dirty_background_bytes or vm.dirty_background_ratio); 0 if unknown.
var dirtyFreerun = func() int64 {
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
	return freerun(physicalMemory(), read("dirty_bytes"), read("dirty_ratio"),
		read("dirty_background_bytes"), read("dirty_background_ratio"))
}
