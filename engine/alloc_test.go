package engine

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// countingAllocator counts the allocations and frees that reach C memory.
type countingAllocator struct {
	memory.Allocator
	allocs, frees int
}

func (c *countingAllocator) Allocate(n int) []byte { c.allocs++; return c.Allocator.Allocate(n) }
func (c *countingAllocator) Free(b []byte)         { c.frees++; c.Allocator.Free(b) }

func TestAllocatorReleasePooled(t *testing.T) {
	mem := &countingAllocator{Allocator: memory.NewGoAllocator()}
	a := &Allocator{mem: mem, free: map[int][][]byte{}}
	a.SetPoolLimit(1 << 20)
	a.Free(a.Allocate(1000))
	a.Free(a.Allocate(1000)) // reused from the pool
	if mem.allocs != 1 || a.Pooled() != 1000 {
		t.Fatalf("before release: %d allocations, %d bytes pooled; want 1 and 1000", mem.allocs, a.Pooled())
	}
	a.ReleasePooled()
	if mem.frees != 1 || a.Pooled() != 0 {
		t.Fatalf("after release: %d frees, %d bytes pooled; want 1 and 0", mem.frees, a.Pooled())
	}
	a.Free(a.Allocate(1000)) // a fresh allocation; the limit still pools it
	if mem.allocs != 2 || a.Pooled() != 1000 {
		t.Fatalf("after reuse: %d allocations, %d bytes pooled; want 2 and 1000", mem.allocs, a.Pooled())
	}
}
