//go:build !linux

package engine

// hugeBytes is the size from which Linux builds advise chunk buffers to be
// backed by huge pages (hugemem_linux.go); elsewhere nothing is advised.
const hugeBytes = 4 << 20

func hugePagesOn() bool { return false }

func adviseHugePages([]byte) {}
