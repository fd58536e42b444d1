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

// Buffers of hugeBytes or more are kept by whole huge pages where that
// adds at most 1/32: an edge chunk's buffer, a few elements short, reuses
// a full chunk's (W6's blocks of three sizes within 64 KiB). Each caller
// sees the length it asked for; the allocator counts the rounded bytes in
// use and pooled. Smaller buffers, and those rounding would grow more,
// pool by exact size.
func TestAllocatorPoolClasses(t *testing.T) {
	mem := &countingAllocator{Allocator: memory.NewGoAllocator()}
	a := &Allocator{mem: mem, free: map[int][][]byte{}}
	a.SetPoolLimit(64 << 20)
	full := 8 << 20
	b := a.Allocate(full - 32<<10)
	if len(b) != full-32<<10 || cap(b) != len(b) || a.InUse() != int64(full) {
		t.Fatalf("edge buffer: len %d cap %d, %d bytes in use; want %d, %d, %d", len(b), cap(b), a.InUse(), full-32<<10, full-32<<10, full)
	}
	first := &b[0]
	a.Free(b)
	if a.Pooled() != int64(full) || a.InUse() != 0 {
		t.Fatalf("after free: %d bytes pooled, %d in use; want %d and 0", a.Pooled(), a.InUse(), full)
	}
	b = a.Allocate(full)
	if &b[0] != first || len(b) != full || cap(b) != full || mem.allocs != 1 {
		t.Fatalf("full buffer: %d C allocations, reused %v, len %d cap %d; want 1, true, %d", mem.allocs, &b[0] == first, len(b), cap(b), full)
	}
	a.Free(b)
	c := a.Allocate(full + 1) // 2 MiB more than asked: its own class
	if mem.allocs != 2 || len(c) != full+1 || a.InUse() != int64(full+1) || a.Pooled() != int64(full) {
		t.Fatalf("larger buffer: %d C allocations, len %d, %d bytes in use, %d pooled; want 2, %d, %d, %d",
			mem.allocs, len(c), a.InUse(), a.Pooled(), full+1, full+1, full)
	}
	a.Free(c)
	a.Free(a.Allocate(1000))
	a.Free(a.Allocate(1001))
	if mem.allocs != 4 {
		t.Fatalf("small buffers: %d C allocations, want 4 (pooled by exact size)", mem.allocs)
	}
	a.ReleasePooled()
	if mem.frees != 4 || a.Pooled() != 0 || a.InUse() != 0 {
		t.Fatalf("after release: %d frees, %d bytes pooled, %d in use; want 4, 0, 0", mem.frees, a.Pooled(), a.InUse())
	}
}
