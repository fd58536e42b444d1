package ops

import (
	"math"
	"slices"

	"github.com/cubego/cubego/plan"
)

// DefaultSplitEvery is the number of input blocks one task of a
// reduction's first round folds when the caller gives no split_every.
// Tasks stream their input one block at a time, so the fan-in costs no
// memory; it only trades parallelism in the first round against the
// number of partial results the later rounds combine.
const DefaultSplitEvery = 16

// Split is the fan-in of a tree reduction: how many blocks one task folds
// along each reduced axis. The zero value lets cubego choose: the first
// round folds DefaultSplitEvery blocks, streamed one at a time, and each
// later round combines as many partial results as fit allowed_mem at once
// (streaming DefaultSplitEvery instead where fewer fit). A given split
// applies to every round, each streamed.
type Split struct {
	// Every is the fan-in over all reduced axes together (Cubed's integer
	// split_every): each axis gets max(⌊Every^(1/naxes)⌋, 2).
	Every int
	// PerAxis is the fan-in per reduced axis (Cubed's dict form, keys are
	// axes of the input, negative ones from the end); reduced axes it
	// leaves out get 2.
	PerAxis map[int]int
}

// Given reports whether the split was chosen by the caller.
func (s Split) Given() bool { return s.Every > 0 || len(s.PerAxis) > 0 }

// fanIn returns the fan-in per reduced axis (indexed like axes).
func (s Split) fanIn(axes []int, ndim int) ([]int, error) {
	out := make([]int, len(axes))
	if len(s.PerAxis) > 0 {
		for i := range out {
			out[i] = 2
		}
		for a, n := range s.PerAxis {
			if a < -ndim || a >= ndim {
				return nil, plan.Errorf(plan.ErrValue, "split_every: axis %d is out of bounds for an array of dimension %d", a, ndim)
			}
			if a < 0 {
				a += ndim
			}
			if n < 2 {
				return nil, plan.Errorf(plan.ErrValue, "split_every: axis %d must fold at least 2 blocks, got %d", a, n)
			}
			if i := slices.Index(axes, a); i >= 0 {
				out[i] = n
			}
		}
		return out, nil
	}
	every := s.Every
	if every <= 0 {
		every = DefaultSplitEvery
	}
	n := splitPerAxis(every, len(axes))
	for i := range out {
		out[i] = n
	}
	return out, nil
}

// NormalizeAxes resolves negative axes and checks for repeats; nil means
// every axis.
func NormalizeAxes(axes []int, ndim int, fn string) ([]int, error) {
	if axes == nil {
		out := make([]int, ndim)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	out := make([]int, len(axes))
	for i, a := range axes {
		if a < -ndim || a >= ndim {
			return nil, plan.Errorf(plan.ErrValue, "%s: axis %d is out of bounds for an array of dimension %d", fn, a, ndim)
		}
		if a < 0 {
			a += ndim
		}
		if slices.Contains(out[:i], a) {
			return nil, plan.Errorf(plan.ErrValue, "%s: repeated axis %d", fn, a)
		}
		out[i] = a
	}
	slices.Sort(out)
	return out, nil
}

// reductions are the functions of Reduce (package doc: "Function names").
var reductions = []string{"all", "any", "max", "mean", "min", "prod", "sum"}

// Reduce reduces x along axes with fn ("sum", "prod", "min", "max",
// "mean", "any", "all") as a tree of fold rounds (see Split). dtype, when
// not nil, is the accumulation and result dtype; splitEvery ≤ 0 lets
// cubego choose the fan-in.
func Reduce(fn string, x *plan.Array, axes []int, keepdims bool, dtype *DType, splitEvery int) (*plan.Array, error) {
	return ReduceSplit(fn, x, axes, keepdims, dtype, Split{Every: splitEvery})
}

// ReduceSplit is Reduce with the fan-in given per axis or chosen by cubego.
func ReduceSplit(fn string, x *plan.Array, axes []int, keepdims bool, dtype *DType, split Split) (*plan.Array, error) {
	if !slices.Contains(reductions, fn) {
		return nil, plan.Errorf(plan.ErrNotImplemented, "unknown reduction %q", fn)
	}
	axes, err := NormalizeAxes(axes, x.NDim(), fn)
	if err != nil {
		return nil, err
	}
	var acc DType
	switch fn {
	case "sum", "prod":
		if !IsNumeric(x.DType) && x.DType != Bool {
			return nil, plan.Errorf(plan.ErrType, "%s is not defined for dtype %s", fn, x.DType)
		}
		switch {
		case dtype != nil:
			acc = *dtype
		case x.DType == Bool || IsSigned(x.DType):
			acc = Int64
		case IsUnsigned(x.DType):
			acc = Uint64
		default:
			acc = x.DType
		}
	case "mean":
		if !IsNumeric(x.DType) && x.DType != Bool {
			return nil, plan.Errorf(plan.ErrType, "mean is not defined for dtype %s", x.DType)
		}
		acc = FloatOf(x.DType)
		if dtype != nil {
			acc = *dtype
		}
	case "min", "max":
		if !IsNumeric(x.DType) && x.DType != Bool {
			return nil, plan.Errorf(plan.ErrType, "%s is not defined for dtype %s", fn, x.DType)
		}
		acc = x.DType
	case "any", "all":
		acc = Bool
	default:
		return nil, plan.Errorf(plan.ErrNotImplemented, "unknown reduction %q", fn)
	}
	outShape := reducedShape(x.Shape, axes, keepdims)
	if len(axes) == 0 {
		return AsType(x, acc)
	}
	var count int64 = 1
	for _, a := range axes {
		count *= int64(x.Shape[a])
	}
	if count == 0 || x.Size() == 0 {
		return emptyReduction(fn, x, outShape, acc, axes, keepdims)
	}
	kernelFn := fn
	if fn == "mean" {
		kernelFn = "sum"
	}
	t := &tree{fn: fn, kernel: kernelFn, x: x, axes: axes, keepdims: keepdims,
		operand: castExpr(plan.InputExpr(0, x.DType), acc), partial: acc, out: acc, split: split}
	if fn == "mean" {
		t.post = &plan.Expr{Op: "divide", DType: acc, Args: []*plan.Expr{
			plan.InputExpr(0, acc), {Op: "const", DType: acc, Value: plan.Scalar{Kind: 'f', F: float64(count)}}}}
	}
	return t.build()
}

func splitPerAxis(splitEvery, naxes int) int {
	if naxes == 0 {
		return 2 // nothing is folded
	}
	return max(int(math.Pow(float64(splitEvery), 1/float64(naxes))), 2)
}

func reducedShape(shape, axes []int, keepdims bool) []int {
	var out []int
	for i, n := range shape {
		switch {
		case !slices.Contains(axes, i):
			out = append(out, n)
		case keepdims:
			out = append(out, 1)
		}
	}
	return out
}

// emptyReduction is the result of reducing over zero elements: the
// identity of the reduction, or an error where there is none.
func emptyReduction(fn string, x *plan.Array, shape []int, acc DType, axes []int, keepdims bool) (*plan.Array, error) {
	var v plan.Scalar
	switch fn {
	case "sum", "any":
		v = plan.Scalar{Kind: 'i'}
	case "prod", "all":
		v = plan.Scalar{Kind: 'i', I: 1}
	case "mean":
		v = plan.Scalar{Kind: 'f', F: math.NaN()}
	default:
		if plan.Prod(shape) > 0 {
			return nil, plan.Errorf(plan.ErrValue, "zero-size array to reduction operation %s which has no identity", fn)
		}
		// The result is empty too: nothing to reduce, nothing to refuse.
	}
	chunks := make([][]int, 0, len(shape))
	for i := range x.Shape {
		switch {
		case !slices.Contains(axes, i):
			chunks = append(chunks, x.Chunks[i])
		case keepdims:
			chunks = append(chunks, []int{1})
		}
	}
	return virtual(shape, acc, chunksAny(chunks), x.Spec, &plan.Generator{Kind: "full", Value: v})
}

func chunksAny(chunks [][]int) []any {
	out := make([]any, len(chunks))
	for i, c := range chunks {
		out[i] = c
	}
	return out
}
