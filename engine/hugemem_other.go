//go:build !linux

package engine

import "github.com/apache/arrow-go/v18/arrow/memory"

// hugeBytes is the size from which Linux builds map chunk buffers on huge
// pages (hugemem_linux.go); elsewhere every buffer comes from malloc.
const hugeBytes = 4 << 20

func newHugeAllocator() memory.Allocator { return nil }
