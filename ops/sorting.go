package ops

import (
	"github.com/cubego/cubego/plan"
)

// wholeAxis rechunks x so that axis is a single chunk, refusing when a
// block would not fit the memory budget.
func wholeAxis(fn string, x *plan.Array, axis int) (*plan.Array, error) {
	chunks := make([]any, x.NDim())
	for d, c := range x.Chunks {
		chunks[d] = c
	}
	chunks[axis] = -1
	bytes := int64(x.DType.Size()) * int64(x.Shape[axis])
	for d, c := range x.Chunks {
		if d != axis {
			bytes *= int64(plan.MaxChunk(c))
		}
	}
	// The op holds its input and output block, each with a buffer copy.
	if need := x.Spec.ReservedMem + 4*bytes; need > x.Spec.AllowedMem {
		return nil, plan.Errorf(plan.ErrValue, "%s along axis %d needs blocks spanning the axis (%s each, about %s per task), over allowed_mem of %s; use smaller chunks along the other axes or raise allowed_mem",
			fn, axis, plan.FormatBytes(bytes), plan.FormatBytes(need), plan.FormatBytes(x.Spec.AllowedMem))
	}
	return Rechunk(x, chunks)
}

// Sort sorts x along axis (stable; NaNs last). Each lane along the axis is
// sorted within one block, so the axis is first gathered into one chunk.
func Sort(x *plan.Array, axis int, descending bool) (*plan.Array, error) {
	return sortOp("sort", x, axis, descending)
}

// Argsort returns the int64 indices that sort x along axis.
func Argsort(x *plan.Array, axis int, descending bool) (*plan.Array, error) {
	return sortOp("argsort", x, axis, descending)
}

func sortOp(fn string, x *plan.Array, axis int, descending bool) (*plan.Array, error) {
	if x.NDim() == 0 {
		return nil, plan.Errorf(plan.ErrValue, "%s needs an array with at least one dimension", fn)
	}
	if IsComplex(x.DType) {
		return nil, plan.Errorf(plan.ErrType, "%s is not defined for complex dtypes", fn)
	}
	axis, err := normAxis(fn, axis, x.NDim())
	if err != nil {
		return nil, err
	}
	dt := x.DType
	if fn == "argsort" {
		dt = Int64
	}
	if x.Size() == 0 {
		return virtual(x.Shape, dt, chunksAny(x.Chunks), x.Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
	}
	whole, err := wholeAxis(fn, x, axis)
	if err != nil {
		return nil, err
	}
	return chunkOp(fn, fn, whole, axis, dt, descending), nil
}

// Take selects the elements at indices along axis. Each task folds over
// the blocks of x along the axis one at a time, copying the elements its
// output block wants.
func Take(x *plan.Array, indices []int64, axis int) (*plan.Array, error) {
	if x.NDim() == 0 {
		return nil, plan.Errorf(plan.ErrValue, "take needs an array with at least one dimension")
	}
	axis, err := normAxis("take", axis, x.NDim())
	if err != nil {
		return nil, err
	}
	n := int64(x.Shape[axis])
	idx := make([]int64, len(indices))
	for i, k := range indices {
		if k < -n || k >= n {
			return nil, plan.Errorf(plan.ErrIndex, "index %d is out of bounds for axis %d with size %d", k, axis, n)
		}
		if k < 0 {
			k += n
		}
		idx[i] = k
	}
	shape := append([]int{}, x.Shape...)
	shape[axis] = len(idx)
	chunks := append([][]int{}, x.Chunks...)
	c, err := plan.RegularChunks(len(idx), max(plan.MaxChunk(x.Chunks[axis]), 1))
	if err != nil {
		return nil, err
	}
	chunks[axis] = c
	if plan.Prod(shape) == 0 {
		return virtual(shape, x.DType, chunksAny(chunks), x.Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
	}
	dims := plan.Identity(x.NDim())
	dims[axis] = plan.DimMap{Kind: plan.Blocks, OutDim: -1}
	out := plan.NewArray(shape, x.DType, chunks, x.Spec)
	plan.NewOp("take", "blockwise", []plan.Input{{Array: x, Dims: dims}}, out,
		plan.Kernel{Core: "take", Axes: []int{axis}, Indices: idx})
	return out, nil
}

// SearchSorted returns, for each element of x2, the int64 position where it
// would be inserted into the sorted 1-D x1 (side "left" or "right"). Each
// task counts, block by block of x1, the elements below its values.
func SearchSorted(x1, x2 *plan.Array, side string) (*plan.Array, error) {
	if x1.NDim() != 1 {
		return nil, plan.Errorf(plan.ErrValue, "searchsorted: x1 must be one-dimensional, got shape %s", FormatShape(x1.Shape))
	}
	if side != "left" && side != "right" {
		return nil, plan.Errorf(plan.ErrValue, "searchsorted: side must be 'left' or 'right', got %q", side)
	}
	if IsComplex(x1.DType) || IsComplex(x2.DType) {
		return nil, plan.Errorf(plan.ErrType, "searchsorted is not defined for complex dtypes")
	}
	dt := ResultType(x1.DType, x2.DType)
	a, err := AsType(x1, dt)
	if err != nil {
		return nil, err
	}
	v, err := AsType(x2, dt)
	if err != nil {
		return nil, err
	}
	if x1.Size() == 0 || x2.Size() == 0 {
		return virtual(x2.Shape, Int64, chunksAny(x2.Chunks), x2.Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
	}
	spec, err := plan.CommonSpec(a, v)
	if err != nil {
		return nil, err
	}
	out := plan.NewArray(x2.Shape, Int64, x2.Chunks, spec)
	plan.NewOp("searchsorted", "blockwise", []plan.Input{
		{Array: a, Dims: []plan.DimMap{{Kind: plan.Blocks, OutDim: -1}}},
		{Array: v, Dims: plan.Identity(v.NDim())},
	}, out, plan.Kernel{Core: "searchsorted_" + side, Axes: []int{0}})
	return out, nil
}

// IsIn reports, per element of x, whether it equals any element of test.
// Each task folds over the blocks of the flattened test elements.
func IsIn(x, test *plan.Array, invert bool) (*plan.Array, error) {
	dt := ResultType(x.DType, test.DType)
	a, err := AsType(x, dt)
	if err != nil {
		return nil, err
	}
	t, err := AsType(test, dt)
	if err != nil {
		return nil, err
	}
	if t, err = Reshape(t, []int{-1}); err != nil {
		return nil, err
	}
	var out *plan.Array
	if t.Size() == 0 || x.Size() == 0 {
		out, err = virtual(x.Shape, Bool, chunksAny(x.Chunks), x.Spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'b'}})
		if err != nil {
			return nil, err
		}
	} else {
		spec, err := plan.CommonSpec(a, t)
		if err != nil {
			return nil, err
		}
		out = plan.NewArray(x.Shape, Bool, x.Chunks, spec)
		plan.NewOp("isin", "blockwise", []plan.Input{
			{Array: t, Dims: []plan.DimMap{{Kind: plan.Blocks, OutDim: -1}}},
			{Array: a, Dims: plan.Identity(a.NDim())},
		}, out, plan.Kernel{Core: "isin", Axes: []int{0}})
	}
	if invert {
		return Elemwise("logical_not", Operand{Array: out})
	}
	return out, nil
}
