package engine

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Allocator hands out chunk buffers from C memory (so they are not Go heap:
// freeing one returns it to the OS at once and RSS follows the projection)
// and tracks the bytes in use and their peak.
//
// Freed buffers are kept for reuse by size while the bytes in use plus the
// bytes kept stay within the pool limit, since chunk sizes repeat and a
// fresh buffer costs a page fault per 4 KiB. Buffers have unspecified
// contents: every user writes all of a buffer before reading it.
type Allocator struct {
	mem       memory.Allocator
	cur, peak atomic.Int64

	mu     sync.Mutex
	free   map[int][][]byte
	pooled int64
	// limit is read without mu by Allocate (a racing SetPoolLimit from a
	// computation ending beside another is then seen a moment late).
	limit atomic.Int64
}

// NewAllocator returns an allocator backed by C malloc, keeping no freed
// buffers until SetPoolLimit.
func NewAllocator() *Allocator {
	return &Allocator{mem: newCAllocator(), free: map[int][][]byte{}}
}

// SetPoolLimit bounds the bytes in use plus the bytes of freed buffers kept
// for reuse (0 keeps none). Lowering it releases kept buffers.
func (a *Allocator) SetPoolLimit(n int64) {
	a.limit.Store(n)
	a.trim()
}

// RaisePoolLimit raises the pool limit to at least n (SetPoolLimit(n) when
// it is lower); it never lowers it.
func (a *Allocator) RaisePoolLimit(n int64) {
	for {
		old := a.limit.Load()
		if old >= n || a.limit.CompareAndSwap(old, n) {
			return
		}
	}
}

// trim releases kept buffers until the pool is within its limit.
func (a *Allocator) trim() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for size, bufs := range a.free {
		for len(bufs) > 0 && a.cur.Load()+a.pooled > a.limit.Load() {
			b := bufs[len(bufs)-1]
			bufs = bufs[:len(bufs)-1]
			a.pooled -= int64(len(b))
			a.mem.Free(b)
		}
		if len(bufs) == 0 {
			delete(a.free, size)
		} else {
			a.free[size] = bufs
		}
	}
}

// poolClass is the size a buffer of n bytes is allocated with, and kept
// under for reuse: a buffer of hugeBytes or more is rounded up to whole
// huge pages where that adds at most 1/32 of it, so that the chunks at an
// array's edge, a few elements shorter than the others, reuse the buffers
// of its full chunks instead of each faulting in fresh memory (W6's
// a[1:, 1:] has blocks of three sizes within 64 KiB of each other; a
// fresh 128 MiB buffer took 0.1–0.2 s to fault in on the 2-core VM).
// The allocator counts the rounded size in use and pooled (the process
// budget covers it); a task counts what it asked for, its model's figure.
func poolClass(n int) int {
	m := (n + poolRound - 1) &^ (poolRound - 1)
	if n < hugeBytes || m-n > n/32 {
		return n
	}
	return m
}

// poolRound is the unit poolClass rounds to: a transparent huge page on
// x86-64 and arm64 Linux.
const poolRound = 2 << 20

// Allocate returns a buffer of n bytes with unspecified contents.
func (a *Allocator) Allocate(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	m := poolClass(n)
	var b []byte
	a.mu.Lock()
	if bufs := a.free[m]; len(bufs) > 0 {
		b = bufs[len(bufs)-1]
		a.free[m] = bufs[:len(bufs)-1]
		a.pooled -= int64(m)
	}
	a.mu.Unlock()
	c := a.cur.Add(int64(m))
	if b == nil {
		if c+a.Pooled() > a.limit.Load() {
			a.trim()
		}
		b = a.mem.Allocate(m)
	}
	for {
		p := a.peak.Load()
		if c <= p || a.peak.CompareAndSwap(p, c) {
			break
		}
	}
	return b[:n:n]
}

// Free releases a buffer from Allocate (all of it: b as Allocate gave it).
func (a *Allocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	n := len(b)
	m := poolClass(n)
	whole := unsafe.Slice(unsafe.SliceData(b), m)
	a.mu.Lock()
	keep := a.cur.Load()+a.pooled <= a.limit.Load()
	if keep {
		a.free[m] = append(a.free[m], whole)
		a.pooled += int64(m)
	}
	a.mu.Unlock()
	a.cur.Add(-int64(m))
	if !keep {
		a.mem.Free(whole)
	}
}

// ReleasePooled returns every kept freed buffer to C memory, keeping the
// pool limit: the next allocations are fresh mallocs (what a memory profiler
// tracing one task needs to see its buffers).
func (a *Allocator) ReleasePooled() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for size, bufs := range a.free {
		for _, b := range bufs {
			a.mem.Free(b)
		}
		delete(a.free, size)
	}
	a.pooled = 0
}

// Pooled returns the bytes of freed buffers kept for reuse.
func (a *Allocator) Pooled() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pooled
}

// InUse returns the bytes currently allocated.
func (a *Allocator) InUse() int64 { return a.cur.Load() }

// Peak returns the most bytes allocated at once since the last ResetPeak.
func (a *Allocator) Peak() int64 { return a.peak.Load() }

// ResetPeak sets the peak to the bytes in use now.
func (a *Allocator) ResetPeak() { a.peak.Store(a.cur.Load()) }

// taskAllocator tracks one task's own allocations on top of the shared
// allocator, so each task reports the peak it allocated.
// It is safe for concurrent use: a task reading ahead allocates the next
// step's buffers from another goroutine.
//
// It also holds the task's mapped chunks (adopt): stored chunks mapped
// from the page cache instead of read into a buffer. They are not
// allocations (not counted in cur and peak: they are the kernel's page
// cache, which it may reclaim, not the process's heap) but are released
// like them, by Free or freeAll.
type taskAllocator struct {
	parent    *Allocator
	mu        sync.Mutex
	cur, peak int64
	live      [][]byte
	mapped    []mapping
}

// mapping is a mapped chunk and the function that unmaps it.
type mapping struct {
	b     []byte
	unmap func()
}

// adopt makes Free(b) (or freeAll) call unmap instead of freeing b.
func (t *taskAllocator) adopt(b []byte, unmap func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mapped = append(t.mapped, mapping{b, unmap})
}

// unmapped removes b from the mapped chunks and returns its unmap (nil
// when b is not one). t.mu is held.
func (t *taskAllocator) unmapped(b []byte) func() {
	if len(b) == 0 {
		return nil
	}
	for i, m := range t.mapped {
		if &m.b[0] == &b[0] {
			t.mapped = append(t.mapped[:i], t.mapped[i+1:]...)
			return m.unmap
		}
	}
	return nil
}

func (t *taskAllocator) Allocate(n int) []byte {
	b := t.parent.Allocate(n)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cur += int64(n)
	t.peak = max(t.peak, t.cur)
	t.live = append(t.live, b)
	return b
}

func (t *taskAllocator) Free(b []byte) {
	t.mu.Lock()
	if unmap := t.unmapped(b); unmap != nil {
		t.mu.Unlock()
		unmap()
		return
	}
	for i, l := range t.live {
		if len(l) > 0 && len(b) > 0 && &l[0] == &b[0] {
			t.live = append(t.live[:i], t.live[i+1:]...)
			break
		}
	}
	t.cur -= int64(len(b))
	t.mu.Unlock()
	t.parent.Free(b)
}

// freeAll releases whatever the task still holds (after an error).
func (t *taskAllocator) freeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range t.live {
		t.cur -= int64(len(b))
		t.parent.Free(b)
	}
	t.live = nil
	for _, m := range t.mapped {
		m.unmap()
	}
	t.mapped = nil
}
