package ops

import (
	"slices"

	"github.com/cubego/cubego/plan"
)

// ArgReduce returns the int64 index of the first maximum (fn "argmax") or
// minimum ("argmin") along axis, or of the flattened array when axis is
// nil. NaN counts as the extreme value, as in numpy. It is two passes over
// x: the extreme value per lane, then the smallest index holding it.
func ArgReduce(fn string, x *plan.Array, axis *int, keepdims bool) (*plan.Array, error) {
	if IsComplex(x.DType) {
		return nil, plan.Errorf(plan.ErrType, "%s is not defined for complex dtypes", fn)
	}
	src := x
	ax := 0
	if axis == nil {
		var err error
		if src, err = Reshape(x, []int{-1}); err != nil {
			return nil, err
		}
	} else {
		var err error
		if ax, err = normAxis(fn, *axis, x.NDim()); err != nil {
			return nil, err
		}
	}
	if src.NDim() == 0 || src.Shape[ax] == 0 {
		shape := reducedShape(src.Shape, []int{ax}, keepdims && axis != nil)
		if axis == nil || plan.Prod(shape) > 0 {
			return nil, plan.Errorf(plan.ErrValue, "%s of an empty sequence", fn)
		}
		return Full(shape, Int64, plan.Scalar{Kind: 'i'}, nil, src.Spec)
	}
	extreme := "max"
	if fn == "argmin" {
		extreme = "min"
	}
	m, err := Reduce(extreme, src, []int{ax}, true, nil, 0)
	if err != nil {
		return nil, err
	}
	eq, err := Elemwise("equal", Operand{Array: src}, Operand{Array: m})
	if err != nil {
		return nil, err
	}
	if IsFloat(src.DType) {
		xn, _ := Elemwise("isnan", Operand{Array: src})
		mn, _ := Elemwise("isnan", Operand{Array: m})
		both, _ := Elemwise("logical_and", Operand{Array: xn}, Operand{Array: mn})
		if eq, err = Elemwise("logical_or", Operand{Array: eq}, Operand{Array: both}); err != nil {
			return nil, err
		}
	}
	// The index along the axis, broadcast over the other dimensions.
	n := src.Shape[ax]
	idx, err := Arange(0, float64(n), 1, Int64, chunksAny([][]int{src.Chunks[ax]}), src.Spec)
	if err != nil {
		return nil, err
	}
	key := make([]Index, src.NDim())
	for d := range key {
		key[d] = Index{Kind: IndexNewAxis}
	}
	key[ax] = Index{Kind: IndexSlice}
	if idx, err = GetItem(idx, key); err != nil {
		return nil, err
	}
	cand, err := Where(eq, Operand{Array: idx}, Operand{Scalar: &plan.Scalar{Kind: 'i', I: int64(n)}})
	if err != nil {
		return nil, err
	}
	keep := keepdims && axis != nil
	out, err := Reduce("min", cand, []int{ax}, keep, nil, 0)
	if err != nil {
		return nil, err
	}
	if keepdims && axis == nil {
		ones := make([]int, x.NDim())
		for i := range ones {
			ones[i] = 1
		}
		return Reshape(out, ones)
	}
	return out, nil
}

// Var returns the variance along axes with the given correction (ddof), or
// its square root (fn "std"). It is two passes: the mean, then the mean of
// squared deviations from it, which is accurate where one-pass sums of
// squares cancel.
func Var(fn string, x *plan.Array, axes []int, keepdims bool, correction float64, dtype *DType) (*plan.Array, error) {
	if !IsNumeric(x.DType) {
		return nil, plan.Errorf(plan.ErrType, "%s is not defined for dtype %s", fn, x.DType)
	}
	axes, err := NormalizeAxes(axes, x.NDim(), fn)
	if err != nil {
		return nil, err
	}
	ft := FloatOf(x.DType)
	if dtype != nil {
		ft = *dtype
	}
	xf, err := AsType(x, ft)
	if err != nil {
		return nil, err
	}
	mean, err := Reduce("mean", xf, axes, true, nil, 0)
	if err != nil {
		return nil, err
	}
	dev, err := Elemwise("subtract", Operand{Array: xf}, Operand{Array: mean})
	if err != nil {
		return nil, err
	}
	var sq *plan.Array
	if IsComplex(ft) {
		a, _ := Elemwise("abs", Operand{Array: dev})
		sq, err = Elemwise("multiply", Operand{Array: a}, Operand{Array: a})
	} else {
		sq, err = Elemwise("multiply", Operand{Array: dev}, Operand{Array: dev})
	}
	if err != nil {
		return nil, err
	}
	ss, err := Reduce("sum", sq, axes, keepdims, nil, 0)
	if err != nil {
		return nil, err
	}
	var n int64 = 1
	for _, a := range axes {
		n *= int64(x.Shape[a])
	}
	denom := float64(n) - correction
	out, err := Elemwise("divide", Operand{Array: ss}, Operand{Scalar: &plan.Scalar{Kind: 'f', F: max(denom, 0)}})
	if err != nil {
		return nil, err
	}
	if fn == "std" {
		return Elemwise("sqrt", Operand{Array: out})
	}
	return out, nil
}

// Squeeze removes the given axes, each of length 1.
func Squeeze(x *plan.Array, axes []int) (*plan.Array, error) {
	axes, err := NormalizeAxes(axes, x.NDim(), "squeeze")
	if err != nil {
		return nil, err
	}
	key := make([]Index, x.NDim())
	for d := range key {
		key[d] = Index{Kind: IndexSlice}
		if slices.Contains(axes, d) {
			if x.Shape[d] != 1 {
				return nil, plan.Errorf(plan.ErrValue, "squeeze: cannot remove axis %d of length %d", d, x.Shape[d])
			}
			key[d] = Index{Kind: IndexInt}
		}
	}
	return GetItem(x, key)
}
