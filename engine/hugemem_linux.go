package engine

import (
	"bytes"
	"fmt"
	"os"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sys/unix"
)

// Chunk buffers of hugeBytes or more are mapped by the engine itself, on a
// 2 MiB boundary, and advised to be backed by transparent huge pages
// (MADV_HUGEPAGE), as numpy does for every array of 4 MiB or more. Most
// kernels stream through whole chunks of tens to hundreds of MiB: with
// 4 KiB pages every 4 KiB of every operand is a TLB miss, a page walk that
// costs the most in a VM (two levels of tables), and a fresh buffer takes
// a page fault per 4 KiB instead of one per 2 MiB. A 1 M-element float64
// exp ran 10% faster on such buffers on an AVX-512 VM (docs/execution.md,
// "Huge pages"). Where the kernel's setting is "never", or a huge page
// cannot be had, the advice does nothing and the pages are 4 KiB ones:
// the buffer is the same memory either way, and is unmapped as soon as it
// is freed, so RSS still follows the buffers in use.
const (
	hugeBytes    = 4 << 20
	hugePageSize = 2 << 20
	smallPage    = 4096
)

type hugeAllocator struct{}

// newHugeAllocator returns the allocator of buffers of hugeBytes or more,
// or nil (all buffers from malloc) where the kernel has no transparent
// huge pages or CUBEGO_HUGE_PAGES=0 is in the environment.
func newHugeAllocator() memory.Allocator {
	if !transparentHugePages() || os.Getenv("CUBEGO_HUGE_PAGES") == "0" {
		return nil
	}
	return hugeAllocator{}
}

// transparentHugePages reports whether madvise(MADV_HUGEPAGE) can give
// huge pages: the kernel has them and they are not switched off.
func transparentHugePages() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	// "always [madvise] never": the selected mode is in brackets.
	return err == nil && !bytes.Contains(b, []byte("[never]"))
}

// Allocate maps size bytes (rounded up to a page) starting on a 2 MiB
// boundary: it maps 2 MiB more than that, then unmaps the unaligned head
// and the tail.
func (hugeAllocator) Allocate(size int) []byte {
	n := roundUp(size, smallPage)
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+hugePageSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		panic(fmt.Sprintf("cubego: mapping a %d-byte chunk buffer: %v", size, err))
	}
	head := roundUp(int(uintptr(p)), hugePageSize) - int(uintptr(p))
	if head > 0 {
		munmap(p, head)
	}
	aligned := unsafe.Add(p, head)
	if tail := hugePageSize - head; tail > 0 {
		munmap(unsafe.Add(aligned, n), tail)
	}
	b := unsafe.Slice((*byte)(aligned), n)
	// The advice is best effort: a kernel without huge pages to spare
	// backs the buffer with 4 KiB ones.
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	return b[:size:size]
}

// Free unmaps a buffer from Allocate.
func (hugeAllocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	munmap(unsafe.Pointer(unsafe.SliceData(b)), roundUp(cap(b), smallPage))
}

// Reallocate is never used by the engine on buffers this large
// (splitAllocator.Reallocate allocates anew); it maps a new buffer.
func (h hugeAllocator) Reallocate(size int, b []byte) []byte {
	nb := h.Allocate(size)
	copy(nb, b)
	h.Free(b)
	return nb
}

func munmap(addr unsafe.Pointer, n int) {
	if err := unix.MunmapPtr(addr, uintptr(n)); err != nil {
		panic(fmt.Sprintf("cubego: unmapping %d bytes of a chunk buffer: %v", n, err))
	}
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }
