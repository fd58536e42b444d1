package engine

/*
#include <malloc.h>
static void cubego_fix_mmap_threshold(int bytes) { mallopt(M_MMAP_THRESHOLD, bytes); }
*/
import "C"

import (
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/memory/mallocator"
)

func init() {
	// glibc raises its mmap threshold dynamically up to 32 MB after large
	// frees, after which freed chunk buffers stay in the heap instead of
	// returning to the OS. A fixed threshold keeps every chunk buffer
	// mmap-backed, so RSS falls as soon as a task frees its buffers.
	C.cubego_fix_mmap_threshold(1 << 20)
}

// newCAllocator returns Arrow's allocator on C malloc, the memory of every
// chunk buffer. It is the engine's one need for cgo (nocgo.go says so when
// cgo is off). Buffers of pageAlignedBytes or more start on a page, as a
// direct read needs (zarr.DirectReader: the file system's alignment is at
// most a page), for the 4 KiB more each costs; smaller ones keep Arrow's
// 64-byte alignment.
func newCAllocator() memory.Allocator {
	return &splitAllocator{
		small:     mallocator.NewMallocator(),
		large:     mallocator.NewMallocatorWithAlignment(4096),
		hugePages: hugePagesOn(),
	}
}

// pageAlignedBytes is the smallest buffer newCAllocator aligns to a page.
const pageAlignedBytes = 1 << 20

// hugeBytes is the smallest buffer advised to be backed by huge pages
// (hugemem_linux.go): numpy's threshold for its arrays.
const hugeBytes = 4 << 20

// splitAllocator allocates buffers of pageAlignedBytes or more from large
// and the others from small; a buffer goes back to the allocator its
// capacity says it came from (both give capacity = size). With hugePages,
// buffers of hugeBytes or more are advised to be backed by huge pages
// (hugemem_linux.go).
type splitAllocator struct {
	small, large memory.Allocator
	hugePages    bool
}

func (a *splitAllocator) pick(size int) memory.Allocator {
	if size >= pageAlignedBytes {
		return a.large
	}
	return a.small
}

func (a *splitAllocator) Allocate(size int) []byte {
	b := a.pick(size).Allocate(size)
	if a.hugePages && size >= hugeBytes {
		adviseHugePages(b)
	}
	return b
}

func (a *splitAllocator) Free(b []byte) { a.pick(cap(b)).Free(b) }

func (a *splitAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}
