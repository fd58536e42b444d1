package engine

import (
	"context"

	"github.com/cubego/cubego/plan"
)

// lastPassOrder returns the order, as indices in C order over its task
// grid, in which the last pass over a stored array (job.lastPass) runs its
// tasks when part of that pass reads the page cache and part the disk:
// nil when the op is not such a pass or all of it reads one of them.
//
// The first pass read part of the array directly (job.firstPass, and the
// rest of it once filling the cache tripped its fillMeter), so the page
// cache holds only the rest; run in its own direction, the last pass would
// first compute over cached chunks with the disk idle, then wait on the
// disk with the cores idle (W3.anom at L: 3.1 s of cached tasks, then 4 s
// of disk-bound ones). Interleaving the two kinds in proportion, each kind
// in the op's direction, keeps the disk reading for some workers while
// others compute. A task's kind is whether its first chunk is in the page
// cache (zarr.Array.ChunkResident) for passes of up to residencyMaxTasks
// tasks, else whether the first pass's direct span holds it. It only
// orders the tasks: a step still reads directly exactly what it finds out
// of the cache (uncachedStep), and a wrong guess costs only the overlap.
func (j *job) lastPassOrder(ctx context.Context, o *plan.OpInfo, reverse bool) []int {
	op := o.Op
	var a *plan.Array
	var in int
	for i := range j.lastPass[op] {
		a, in = op.Inputs[i].Array, i
		break
	}
	if a == nil {
		return nil
	}
	var sp span
	found := false
	for fop, ins := range j.firstPass {
		for i, s := range ins {
			if fop.Inputs[i].Array == a {
				sp, found = s, true
			}
		}
	}
	n := int(o.NumTasks)
	if !found || n < 2 {
		return nil
	}
	onDisk := func(coords []int) bool { return sp.holds(a, coords) }
	if j.storage != nil && n <= residencyMaxTasks {
		if z, err := j.storage.array(ctx, a); err == nil {
			onDisk = func(coords []int) bool {
				if f, ok := z.ChunkResident(ctx, coords); ok {
					return f < uncachedMax
				}
				return sp.holds(a, coords)
			}
		}
	}
	nb := op.TaskGrid()
	zero := make([]int, len(op.IterShape(make([]int, len(nb)))))
	coords := make([]int, a.NDim())
	var cached, disk []int
	for k := range n {
		idx := k
		if reverse {
			idx = n - 1 - k
		}
		b0, _ := op.TaskBlockRange(unravel(int64(idx), nb))
		r := op.InputRegion(in, b0, zero)
		for d := range coords {
			coords[d] = a.BlockOf(d, r.Start[d])
		}
		if onDisk(coords) {
			disk = append(disk, idx)
		} else {
			cached = append(cached, idx)
		}
	}
	if len(cached) == 0 || len(disk) == 0 {
		return nil
	}
	return interleave(cached, disk)
}

// residencyMaxTasks is the most tasks of a last pass whose first chunks
// lastPassOrder looks up in the page cache (one mincore each).
const residencyMaxTasks = 4096

// interleave merges a and b in proportion to their lengths, each in its
// own order, a first: after any prefix of the result, each has given up
// about its share of it.
func interleave(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	i, k := 0, 0
	for i < len(a) || k < len(b) {
		// Take from a while its share taken so far, i/len(a), is not
		// ahead of b's, k/len(b).
		if k == len(b) || i < len(a) && i*len(b) <= k*len(a) {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[k])
			k++
		}
	}
	return out
}

// orderStep returns a step function (as advance and retreat) walking the
// blocks of a grid of shape nb in order (a permutation of the grid's flat
// indices in C order): the block after block, or false after the last.
// Stateless, so that the scheduler and its prefetcher each walk it from
// their own block.
func orderStep(order []int) func(block, nb []int) bool {
	pos := make([]int, len(order)) // each flat index's place in order
	for s, idx := range order {
		pos[idx] = s
	}
	return func(block, nb []int) bool {
		idx := 0
		for d := range nb {
			idx = idx*nb[d] + block[d]
		}
		s := pos[idx] + 1
		if s >= len(order) {
			return false
		}
		copy(block, unravel(int64(order[s]), nb))
		return true
	}
}
