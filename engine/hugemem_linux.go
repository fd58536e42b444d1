package engine

import (
	"bytes"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Chunk buffers of hugeBytes or more are advised to be backed by
// transparent huge pages (MADV_HUGEPAGE) over the 2 MiB-aligned part of
// their pages, as numpy does for every array of 4 MiB or more. Most
// kernels stream through whole chunks of tens to hundreds of MiB: with
// 4 KiB pages every 4 KiB of every operand is a TLB miss, a page walk that
// costs the most in a VM (two levels of tables), and a fresh buffer takes
// a page fault per 4 KiB instead of one per 2 MiB. A 1 M-element float64
// exp ran 10% faster on such buffers on an AVX-512 VM (docs/execution.md,
// "Huge pages"). The buffers still come from malloc, unchanged: memray
// sees the same allocations, and a freed buffer leaves the process as
// before. Where no huge page is free, the kernel backs the buffer with
// 4 KiB pages.
const hugePageSize = 2 << 20

// hugePagesOn reports whether buffers are advised: the kernel has
// transparent huge pages and they are not switched off, neither by its
// setting ("never") nor by CUBEGO_HUGE_PAGES=0 in the environment.
func hugePagesOn() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	// "always [madvise] never": the selected mode is in brackets.
	return err == nil && !bytes.Contains(b, []byte("[never]")) && os.Getenv("CUBEGO_HUGE_PAGES") != "0"
}

// adviseHugePages advises the whole 2 MiB pages inside b. The advice is
// best effort: an error leaves the buffer on 4 KiB pages.
func adviseHugePages(b []byte) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + hugePageSize - 1) &^ (hugePageSize - 1)
	hi := (start + uintptr(len(b))) &^ (hugePageSize - 1)
	if hi > lo {
		_ = unix.Madvise(b[lo-start:hi-start], unix.MADV_HUGEPAGE)
	}
}
