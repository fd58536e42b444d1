package plan

import "sort"

// FuseOptions bound the ops fusion builds, as Cubed's multiple-input
// fusion does, beyond the memory check every fused op passes: a fused op
// reads at most MaxSourceArrays distinct stored (non-virtual) arrays, and
// a task of it holds at most MaxInputBlocks stored blocks at one step
// (blocks a reduction folds one at a time count once). Both keep tasks
// short and their reads few. Zero means no bound.
type FuseOptions struct {
	MaxSourceArrays int
	MaxInputBlocks  int
	// SingleInput fuses only chains, as Cubed's simple_optimize_dag: an op
	// with exactly one input array absorbs the op producing it (itself
	// already fused with its own producers), and no other op fuses.
	SingleInput bool
	// Stored are arrays already computed and stored (a resumed computation
	// found them complete): their readers read them instead of fusing in
	// the ops that compute them.
	Stored map[*Array]bool
}

// DefaultFuseOptions are Cubed's defaults (max_total_source_arrays=4,
// max_total_num_input_blocks=10).
var DefaultFuseOptions = FuseOptions{MaxSourceArrays: 4, MaxInputBlocks: 10}

// allows reports whether a fused op keeps within the bounds.
func (o FuseOptions) allows(op *Op) bool {
	if o.MaxSourceArrays > 0 && SourceArrays(op) > o.MaxSourceArrays {
		return false
	}
	return o.MaxInputBlocks <= 0 || InputBlocks(op) <= o.MaxInputBlocks
}

// SourceArrays returns the number of distinct stored arrays op reads.
func SourceArrays(op *Op) int {
	n := 0
	for _, a := range op.InputArrays() {
		if !a.Virtual() {
			n++
		}
	}
	return n
}

// InputBlocks returns the most stored blocks a task of op reads at one
// step, summed over its inputs (an input read twice counts twice, as the
// engine reads it twice). Along each dimension it is the most blocks any
// task's input range overlaps; their product bounds a task's blocks.
func InputBlocks(op *Op) int {
	iter := 0
	for _, in := range op.Inputs {
		for _, m := range in.Dims {
			if m.Kind == Blocks {
				iter = max(iter, m.IterAxis+1)
			}
		}
	}
	step := make([]int, iter)
	grid := op.TaskGrid()
	total := 0
	for i, in := range op.Inputs {
		if in.Array.Virtual() {
			continue
		}
		blocks := 1
		for d, m := range in.Dims {
			most := 1
			switch m.Kind {
			case Full:
				most = len(in.Array.Chunks[d])
			case Blocks:
				if m.Grid != nil {
					off := Offsets(in.Array.Chunks[d])
					for b := 1; b < len(m.Grid); b++ {
						most = max(most, blocksOverlapped(off, m.Grid[b-1], 1, m.Grid[b]-m.Grid[b-1]))
					}
				}
			case Affine, Scaled, Ranges:
				if m.Kind == Affine && m.Step == 0 {
					break
				}
				off := Offsets(in.Array.Chunks[d])
				task := make([]int, len(grid))
				for t := range grid[m.OutDim] {
					task[m.OutDim] = t
					r := op.InputRegion(i, task, step)
					most = max(most, blocksOverlapped(off, r.Start[d], r.Step[d], r.Count[d]))
				}
			}
			blocks *= most
		}
		total += blocks
	}
	return total
}

// blocksOverlapped returns the number of blocks (with element offsets off)
// that the elements start + step·k, 0 ≤ k < count, span, clipped to the
// axis.
func blocksOverlapped(off []int, start, step, count int) int {
	if count <= 0 {
		return 0
	}
	lo, hi := start, start+step*(count-1)
	if lo > hi {
		lo, hi = hi, lo
	}
	n := off[len(off)-1]
	lo, hi = max(lo, 0), min(hi, n-1)
	if lo > hi {
		return 0
	}
	block := func(e int) int { return sort.SearchInts(off, e+1) - 1 }
	return block(hi) - block(lo) + 1
}
