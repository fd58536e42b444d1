//go:build !linux

package engine

// Only Linux builds advise chunk buffers to be backed by huge pages
// (hugemem_linux.go).

func hugePagesOn() bool { return false }

func adviseHugePages([]byte) {}
