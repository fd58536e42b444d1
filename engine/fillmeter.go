package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cubego/cubego/plan"
)

// fillWindow is how many of its latest steps through the page cache a
// first pass compares with its direct steps (fillMeter).
const fillWindow = 4

// fillMeter times the reads of a first pass over an array (job.firstPass):
// its direct steps, then its steps through the page cache, which fill the
// cache for the last pass. Filling the cache pays only while it is not
// much slower than reading directly: a chunk cached costs the first pass
// its buffered read less its direct read, and saves the last pass at most
// a direct read. So once the latest fillWindow buffered steps read at less
// than half the rate of the direct ones, the cache costs more than it can
// save, and the rest of the pass reads directly (slow). This happens on a
// virtual machine whose free memory goes back to its host: a page the
// cache fills there faults to the host on first touch (the 2-core Zen 4
// VM: 0.45 GB/s per worker through the cache once its page cache held
// about 17 GB, against 1.35 GB/s direct). Where filling the cache costs
// about a copy, it never trips.
type fillMeter struct {
	mu          sync.Mutex
	directBytes int64
	directTime  time.Duration
	recent      [fillWindow]struct {
		bytes int64
		d     time.Duration
	}
	n    int // buffered steps recorded
	slow atomic.Bool
}

// newFillMeters returns a meter for each array read in a first pass (a
// variable, so that tests can trip them).
var newFillMeters = func(first map[*plan.Op]map[int]span) map[*plan.Array]*fillMeter {
	var out map[*plan.Array]*fillMeter
	for op, ins := range first {
		for i := range ins {
			if out == nil {
				out = map[*plan.Array]*fillMeter{}
			}
			out[op.Inputs[i].Array] = &fillMeter{}
		}
	}
	return out
}

// record adds a read of n bytes that took d, direct or through the cache.
func (m *fillMeter) record(n int64, d time.Duration, direct bool) {
	if m == nil || n <= 0 || d <= 0 || m.slow.Load() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if direct {
		m.directBytes += n
		m.directTime += d
		return
	}
	m.recent[m.n%fillWindow].bytes, m.recent[m.n%fillWindow].d = n, d
	m.n++
	if m.n < fillWindow || m.directBytes == 0 {
		return
	}
	var b int64
	var t time.Duration
	for _, r := range m.recent {
		b, t = b+r.bytes, t+r.d
	}
	// b/t < (directBytes/directTime)/2, without division.
	if float64(b)*float64(m.directTime)*2 < float64(m.directBytes)*float64(t) {
		m.slow.Store(true)
	}
}

// tripped reports whether filling the cache has turned out slower than
// it can pay back (nil: no meter).
func (m *fillMeter) tripped() bool { return m != nil && m.slow.Load() }
