package engine

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/memory/mallocator"
)

// Allocator hands out chunk buffers from C memory (so they are not Go heap:
// freeing one returns it to the OS allocator at once and RSS follows the
// projection) and tracks the bytes in use and their peak.
type Allocator struct {
	mem       memory.Allocator
	cur, peak atomic.Int64
}

// NewAllocator returns an allocator backed by C malloc.
func NewAllocator() *Allocator { return &Allocator{mem: mallocator.NewMallocator()} }

// Allocate returns a zeroed buffer of n bytes.
func (a *Allocator) Allocate(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	b := a.mem.Allocate(n)
	c := a.cur.Add(int64(n))
	for {
		p := a.peak.Load()
		if c <= p || a.peak.CompareAndSwap(p, c) {
			break
		}
	}
	return b
}

// Free releases a buffer from Allocate.
func (a *Allocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	a.cur.Add(-int64(len(b)))
	a.mem.Free(b)
}

// InUse returns the bytes currently allocated.
func (a *Allocator) InUse() int64 { return a.cur.Load() }

// Peak returns the most bytes allocated at once since the last ResetPeak.
func (a *Allocator) Peak() int64 { return a.peak.Load() }

// ResetPeak sets the peak to the bytes in use now.
func (a *Allocator) ResetPeak() { a.peak.Store(a.cur.Load()) }

// taskAllocator tracks one task's own allocations on top of the shared
// allocator, so each task reports the peak it allocated.
type taskAllocator struct {
	parent    *Allocator
	cur, peak int64
	live      [][]byte
}

func (t *taskAllocator) Allocate(n int) []byte {
	b := t.parent.Allocate(n)
	t.cur += int64(n)
	t.peak = max(t.peak, t.cur)
	t.live = append(t.live, b)
	return b
}

func (t *taskAllocator) Free(b []byte) {
	for i, l := range t.live {
		if len(l) > 0 && len(b) > 0 && &l[0] == &b[0] {
			t.live = append(t.live[:i], t.live[i+1:]...)
			break
		}
	}
	t.cur -= int64(len(b))
	t.parent.Free(b)
}

// freeAll releases whatever the task still holds (after an error).
func (t *taskAllocator) freeAll() {
	for _, b := range t.live {
		t.cur -= int64(len(b))
		t.parent.Free(b)
	}
	t.live = nil
}
