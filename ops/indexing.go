package ops

import "github.com/cubego/cubego/plan"

// IndexKind names one item of a basic index.
type IndexKind uint8

const (
	IndexInt IndexKind = iota
	IndexSlice
	IndexNewAxis
	IndexEllipsis
)

// Index is one item of a basic index: an integer, a slice (nil bounds mean
// "from the start/to the end", a nil step means 1), None (newaxis) or ....
type Index struct {
	Kind              IndexKind
	Int               int
	Start, Stop, Step *int
}

// GetItem returns x[key] for a basic index (integers, slices with any
// step, newaxis and one ellipsis).
func GetItem(x *plan.Array, key []Index) (*plan.Array, error) {
	nIndexing := 0
	ellipses := 0
	for _, k := range key {
		switch k.Kind {
		case IndexInt, IndexSlice:
			nIndexing++
		case IndexEllipsis:
			ellipses++
		}
	}
	if ellipses > 1 {
		return nil, plan.Errorf(plan.ErrIndex, "an index can only have a single ellipsis ('...')")
	}
	if nIndexing > x.NDim() {
		return nil, plan.Errorf(plan.ErrIndex, "too many indices for array: array is %d-dimensional, but %d were indexed", x.NDim(), nIndexing)
	}
	// Expand the ellipsis (or append one) into full slices.
	var full []Index
	expanded := false
	for _, k := range key {
		if k.Kind == IndexEllipsis {
			for range x.NDim() - nIndexing {
				full = append(full, Index{Kind: IndexSlice})
			}
			expanded = true
			continue
		}
		full = append(full, k)
	}
	if !expanded {
		for range x.NDim() - nIndexing {
			full = append(full, Index{Kind: IndexSlice})
		}
	}
	dims := make([]plan.DimMap, 0, x.NDim())
	var shape []int
	var chunks [][]int
	identity := true
	d := 0
	for _, k := range full {
		switch k.Kind {
		case IndexNewAxis:
			shape = append(shape, 1)
			chunks = append(chunks, []int{1})
			identity = false
		case IndexInt:
			n := x.Shape[d]
			i := k.Int
			if i < -n || i >= n {
				return nil, plan.Errorf(plan.ErrIndex, "index %d is out of bounds for axis %d with size %d", k.Int, d, n)
			}
			if i < 0 {
				i += n
			}
			dims = append(dims, plan.DimMap{Kind: plan.Const, Index: i})
			identity = false
			d++
		case IndexSlice:
			n := x.Shape[d]
			start, step, count, err := sliceIndices(k, n)
			if err != nil {
				return nil, err
			}
			if start != 0 || step != 1 || count != n {
				identity = false
			}
			dims = append(dims, plan.DimMap{Kind: plan.Affine, OutDim: len(shape), Start: start, Step: step})
			shape = append(shape, count)
			c, err := slicedChunks(x.Chunks[d], start, step, count)
			if err != nil {
				return nil, err
			}
			chunks = append(chunks, c)
			d++
		}
	}
	if identity {
		return x, nil
	}
	if plan.Prod(shape) == 0 {
		return virtual(shape, x.DType, chunksAny(chunks), x.Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
	}
	if x.Virtual() {
		// Reading a region of a virtual array generates just that region.
		return viewOf(x, dims, shape, chunks)
	}
	return mapOp("getitem", []plan.Input{{Array: x, Dims: dims}}, plan.InputExpr(0, x.DType), shape, chunks)
}

// viewOf makes an op that copies a region of x; kept separate so virtual
// sources can later be sliced without an op.
func viewOf(x *plan.Array, dims []plan.DimMap, shape []int, chunks [][]int) (*plan.Array, error) {
	return mapOp("getitem", []plan.Input{{Array: x, Dims: dims}}, plan.InputExpr(0, x.DType), shape, chunks)
}

// sliceIndices follows Python's slice.indices: it returns the first index,
// the step and the number of elements selected from an axis of length n.
func sliceIndices(k Index, n int) (start, step, count int, err error) {
	step = 1
	if k.Step != nil {
		step = *k.Step
	}
	if step == 0 {
		return 0, 0, 0, plan.Errorf(plan.ErrValue, "slice step cannot be zero")
	}
	clamp := func(p *int, def int, lo, hi int) int {
		if p == nil {
			return def
		}
		v := *p
		if v < 0 {
			v += n
		}
		return max(lo, min(v, hi))
	}
	var stop int
	if step > 0 {
		start = clamp(k.Start, 0, 0, n)
		stop = clamp(k.Stop, n, 0, n)
		if stop > start {
			count = (stop-start-1)/step + 1 // not (stop-start+step-1)/step: that overflows for a huge step
		}
	} else {
		start = clamp(k.Start, n-1, -1, n-1)
		stop = clamp(k.Stop, -1, -1, n-1)
		if k.Stop != nil && *k.Stop < -n {
			stop = -1
		}
		if start > stop {
			count = int(uint(start-stop-1)/uint(-step)) + 1 // uint: -step of math.MinInt is 2**63
		}
	}
	if count == 0 {
		start = 0
	}
	return start, step, count, nil
}

// slicedChunks chooses output chunks for a slice: with step 1 the pieces of
// the input's blocks inside the slice, so each output block reads a single
// input chunk; otherwise Cubed's rule: regular blocks of c - c mod |step|
// elements for an input chunk size c >= |step| (so that a block of the result
// spans about one input chunk), or of c when the step is larger than c.
// For example 20 elements in chunks of 5, sliced [3:14:2], give (4, 2).
func slicedChunks(in []int, start, step, count int) ([]int, error) {
	if count == 0 {
		return []int{0}, nil
	}
	if step == 1 {
		var out []int
		off := 0
		for _, c := range in {
			lo, hi := max(off, start), min(off+c, start+count)
			if hi > lo {
				out = append(out, hi-lo)
			}
			off += c
		}
		return out, nil
	}
	c := max(plan.MaxChunk(in), 1)
	if -c <= step && step <= c { // |step| <= c, without negating math.MinInt
		c -= c % max(step, -step)
	}
	return plan.RegularChunks(count, c)
}
