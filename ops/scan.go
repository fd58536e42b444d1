package ops

import (
	"slices"

	"github.com/cubego/cubego/plan"
)

// chunkOp applies a function of whole blocks along axis (scan, sort) to x.
func chunkOp(fn, core string, x *plan.Array, axis int, dt DType, descending bool) *plan.Array {
	out := plan.NewArray(x.Shape, dt, x.Chunks, x.Spec)
	plan.NewOp(fn, "blockwise", []plan.Input{{Array: x, Dims: plan.Identity(x.NDim())}}, out,
		plan.Kernel{Core: core, Axes: []int{axis}, Descending: descending})
	return out
}

func normAxis(fn string, axis, ndim int) (int, error) {
	if axis < -ndim || axis >= ndim {
		return 0, plan.Errorf(plan.ErrValue, "%s: axis %d is out of bounds for an array of dimension %d", fn, axis, ndim)
	}
	if axis < 0 {
		axis += ndim
	}
	return axis, nil
}

// cumulatives are the functions of Cumulative.
var cumulatives = []string{"cumprod", "cumsum"}

// Cumulative returns the cumulative sum (fn "cumsum") or product
// ("cumprod") along axis. Each block is scanned on its own; the totals of
// the blocks before each block (an exclusive scan of the block totals) are
// then combined in, so every element is read twice and nothing is held
// beyond one block. includeInitial prepends the identity.
func Cumulative(fn string, x *plan.Array, axis int, dtype *DType, includeInitial bool) (*plan.Array, error) {
	if !slices.Contains(cumulatives, fn) {
		return nil, plan.Errorf(plan.ErrNotImplemented, "unknown cumulative function %q", fn)
	}
	if x.NDim() == 0 {
		return nil, plan.Errorf(plan.ErrValue, "%s needs an array with at least one dimension", fn)
	}
	axis, err := normAxis(fn, axis, x.NDim())
	if err != nil {
		return nil, err
	}
	if !IsNumeric(x.DType) && x.DType != Bool {
		return nil, plan.Errorf(plan.ErrType, "%s is not defined for dtype %s", fn, x.DType)
	}
	dt := x.DType
	switch {
	case dtype != nil:
		dt = *dtype
	case x.DType == Bool || IsSigned(x.DType):
		dt = Int64
	case IsUnsigned(x.DType):
		dt = Uint64
	}
	identity := plan.Scalar{Kind: 'i'}
	combine, total := "add", "sum"
	if fn == "cumprod" {
		identity.I = 1
		combine, total = "multiply", "prod"
	}
	xc, err := AsType(x, dt)
	if err != nil {
		return nil, err
	}
	var result *plan.Array
	switch {
	case x.Size() == 0:
		result = xc
	case len(x.Chunks[axis]) == 1:
		result = chunkOp(fn, fn, xc, axis, dt, false)
	default:
		scanned := chunkOp(fn, fn, xc, axis, dt, false)
		// One total per block along axis.
		t := &tree{fn: total, kernel: total, x: xc, axes: []int{axis}, keepdims: true,
			operand: plan.InputExpr(0, dt), partial: dt, out: dt}
		totals := t.round(xc, false, []int{1}, false, false, false).Output
		chunks := make([]any, x.NDim())
		for d, c := range totals.Chunks {
			chunks[d] = c
		}
		chunks[axis] = -1
		if totals, err = Rechunk(totals, chunks); err != nil {
			return nil, err
		}
		inclusive := chunkOp(fn, fn, totals, axis, dt, false)
		// Exclusive: the identity, then the inclusive totals but the last.
		head, err := identityAlong(totals, axis, dt, identity)
		if err != nil {
			return nil, err
		}
		key := make([]Index, x.NDim())
		for d := range key {
			key[d] = Index{Kind: IndexSlice}
		}
		last := -1
		key[axis] = Index{Kind: IndexSlice, Stop: &last}
		before, err := GetItem(inclusive, key)
		if err != nil {
			return nil, err
		}
		exclusive, err := Concat([]*plan.Array{head, before}, axis)
		if err != nil {
			return nil, err
		}
		dims := plan.Identity(x.NDim())
		dims[axis] = plan.DimMap{Kind: plan.BlockIndex, OutDim: axis}
		expr := &plan.Expr{Op: combine, DType: dt, Args: []*plan.Expr{plan.InputExpr(0, dt), plan.InputExpr(1, dt)}}
		result, err = mapOp(fn, []plan.Input{{Array: scanned, Dims: plan.Identity(x.NDim())}, {Array: exclusive, Dims: dims}},
			expr, x.Shape, x.Chunks)
		if err != nil {
			return nil, err
		}
	}
	if !includeInitial {
		return result, nil
	}
	head, err := identityAlong(result, axis, dt, identity)
	if err != nil {
		return nil, err
	}
	return Concat([]*plan.Array{head, result}, axis)
}

// identityAlong returns a virtual array like x with extent 1 along axis,
// filled with v.
func identityAlong(x *plan.Array, axis int, dt DType, v plan.Scalar) (*plan.Array, error) {
	shape := append([]int{}, x.Shape...)
	shape[axis] = 1
	chunks := make([]any, x.NDim())
	for d, c := range x.Chunks {
		chunks[d] = c
	}
	chunks[axis] = 1
	return Full(shape, dt, v, chunks, x.Spec)
}
