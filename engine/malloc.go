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
// cgo is off).
func newCAllocator() memory.Allocator { return mallocator.NewMallocator() }
