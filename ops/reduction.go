package ops

import (
	"math"
	"slices"

	"github.com/cubego/cubego/plan"
)

// DefaultSplitEvery is the number of input blocks one reduction task folds
// when the caller gives none. Tasks stream their input one block at a
// time, so the fan-in costs no memory; it only trades parallelism in the
// first round against the number of rounds.
const DefaultSplitEvery = 16

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

// Reduce reduces x along axes with fn ("sum", "prod", "min", "max",
// "mean") as a tree of streaming fold rounds. dtype, when not nil, is the
// accumulation and result dtype; splitEvery ≤ 0 picks the default.
func Reduce(fn string, x *plan.Array, axes []int, keepdims bool, dtype *DType, splitEvery int) (*plan.Array, error) {
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
	split := splitPerAxis(splitEvery, len(axes))
	cur := x
	for {
		nb := cur.NumBlocks()
		last := true
		for _, a := range axes {
			if (nb[a]+split-1)/split > 1 {
				last = false
			}
		}
		var post *plan.Expr
		if last && fn == "mean" {
			post = &plan.Expr{Op: "divide", DType: acc, Args: []*plan.Expr{
				plan.InputExpr(0, acc), {Op: "const", DType: acc, Value: plan.Scalar{Kind: 'f', F: float64(count)}}}}
		}
		cur, err = reduceRound(fn, kernelFn, cur, axes, acc, split, last && !keepdims, post)
		if err != nil {
			return nil, err
		}
		if last {
			return cur, nil
		}
	}
}

func splitPerAxis(splitEvery, naxes int) int {
	if splitEvery <= 0 {
		splitEvery = DefaultSplitEvery
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

// reduceRound folds groups of split blocks along each reduced axis into one
// element. In the last round (squeeze) the reduced axes are dropped from
// the output when keepdims is false; a fold's bytes are the same either way.
func reduceRound(fn, kernelFn string, x *plan.Array, axes []int, acc DType, split int, squeeze bool, post *plan.Expr) (*plan.Array, error) {
	nb := x.NumBlocks()
	var shape []int
	var chunks [][]int
	dims := make([]plan.DimMap, x.NDim())
	iter := 0
	for d := range x.NDim() {
		if !slices.Contains(axes, d) {
			dims[d] = plan.DimMap{Kind: plan.Affine, OutDim: len(shape), Step: 1, Frame: d}
			shape = append(shape, x.Shape[d])
			chunks = append(chunks, x.Chunks[d])
			continue
		}
		if squeeze {
			dims[d] = plan.DimMap{Kind: plan.Blocks, OutDim: -1, IterAxis: iter, Frame: d}
		} else {
			groups := (nb[d] + split - 1) / split
			dims[d] = plan.DimMap{Kind: plan.Blocks, OutDim: len(shape), Factor: split, IterAxis: iter, Frame: d}
			shape = append(shape, groups)
			chunks = append(chunks, plan.RegularChunks(groups, 1))
		}
		iter++
	}
	spec := x.Spec
	out := plan.NewArray(shape, acc, chunks, spec)
	k := plan.Kernel{Core: "reduce", Reduce: kernelFn, Axes: axes, FrameNDim: x.NDim(),
		Exprs: []*plan.Expr{castExpr(plan.InputExpr(0, x.DType), acc)}}
	if post != nil {
		k.Exprs = append(k.Exprs, post)
	}
	plan.NewOp(fn, "blockwise", []plan.Input{{Array: x, Dims: dims}}, out, k)
	return out, nil
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
