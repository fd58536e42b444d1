package ops

import (
	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// Matmul returns x @ y with the Array API's rules: 1-D operands are
// promoted to matrices and the added dimension removed afterwards, and
// batch dimensions broadcast. Each task streams the contracted dimension
// one block pair at a time, accumulating into its output block, so no
// partial products are stored.
func Matmul(x, y *plan.Array) (*plan.Array, error) {
	if x.NDim() == 0 || y.NDim() == 0 {
		return nil, plan.Errorf(plan.ErrValue, "matmul: operands must have at least one dimension, got shapes %s and %s", FormatShape(x.Shape), FormatShape(y.Shape))
	}
	dt := ResultType(x.DType, y.DType)
	if !IsNumeric(dt) && dt != Bool {
		return nil, plan.Errorf(plan.ErrType, "matmul is not defined for dtype %s", dt)
	}
	kx := x.Shape[x.NDim()-1]
	ky := y.Shape[0]
	if y.NDim() >= 2 {
		ky = y.Shape[y.NDim()-2]
	}
	if kx != ky {
		return nil, plan.Errorf(plan.ErrValue, "matmul: dimension mismatch, shapes %s and %s are not aligned: %d (dim %d) != %d", FormatShape(x.Shape), FormatShape(y.Shape), kx, x.NDim()-1, ky)
	}
	// x.T or y.T of a stored array is read straight from it (the kernel
	// takes transposed operands) rather than stored as a transpose first.
	var xt, yt *plan.Array
	if floatOrComplex(dt) {
		xt, yt = transposeSource(x), transposeSource(y)
	}
	xb, yb := batchShape(x), batchShape(y)
	batch, err := BroadcastShapes(xb, yb)
	if err != nil {
		return nil, plan.Errorf(plan.ErrValue, "matmul: batch dimensions of %s and %s: %v", FormatShape(x.Shape), FormatShape(y.Shape), err)
	}
	// Contract along the same block boundaries: y follows x's chunks of K.
	ykAxis := 0
	if y.NDim() >= 2 {
		ykAxis = y.NDim() - 2
	}
	if yt != nil && !equalInts(x.Chunks[x.NDim()-1], y.Chunks[ykAxis]) {
		yt = nil // y is rechunked along K, which reads y, not its source
	}
	if !equalInts(x.Chunks[x.NDim()-1], y.Chunks[ykAxis]) {
		spec := make([]any, y.NDim())
		for i, c := range y.Chunks {
			spec[i] = c
		}
		spec[ykAxis] = x.Chunks[x.NDim()-1]
		if y, err = Rechunk(y, spec); err != nil {
			return nil, err
		}
	}
	nb := len(batch)
	shape := append([]int{}, batch...)
	chunks := make([][]int, 0, nb+2)
	xDims := broadcastDims(xb, batch)
	yDims := broadcastDims(yb, batch)
	for i := range batch {
		chunks = append(chunks, pickChunks(batch[i], x, xb, y, yb, i))
	}
	if x.NDim() >= 2 {
		xDims = append(xDims, plan.DimMap{Kind: plan.Affine, OutDim: len(shape), Step: 1})
		shape = append(shape, x.Shape[x.NDim()-2])
		chunks = append(chunks, x.Chunks[x.NDim()-2])
	}
	xDims = append(xDims, plan.DimMap{Kind: plan.Blocks, OutDim: -1})
	yDims = append(yDims, plan.DimMap{Kind: plan.Blocks, OutDim: -1})
	if y.NDim() >= 2 {
		yDims = append(yDims, plan.DimMap{Kind: plan.Affine, OutDim: len(shape), Step: 1})
		shape = append(shape, y.Shape[y.NDim()-1])
		chunks = append(chunks, y.Chunks[y.NDim()-1])
	}
	spec, err := plan.CommonSpec(x, y)
	if err != nil {
		return nil, err
	}
	if kx == 0 || plan.Prod(shape) == 0 {
		return virtual(shape, dt, chunksAny(chunks), spec, &plan.Generator{Kind: "full", Value: plan.Scalar{Kind: 'i'}})
	}
	kernel := plan.Kernel{Core: "matmul", Exprs: []*plan.Expr{
		castExpr(plan.InputExpr(0, x.DType), dt), castExpr(plan.InputExpr(1, y.DType), dt)}}
	if xt != nil || yt != nil {
		kernel.Transposed = []bool{xt != nil, yt != nil}
	}
	if xt != nil {
		x = xt
		n := len(xDims)
		xDims[n-2], xDims[n-1] = xDims[n-1], xDims[n-2]
	}
	if yt != nil {
		y = yt
		n := len(yDims)
		yDims[n-2], yDims[n-1] = yDims[n-1], yDims[n-2]
	}
	out := plan.NewArray(shape, dt, chunks, spec)
	op := plan.NewOp("matmul", "blockwise", []plan.Input{{Array: x, Dims: xDims}, {Array: y, Dims: yDims}}, out, kernel)
	// a @ a.T and a.T @ a are symmetric: compute the blocks on and above
	// the diagonal, each written twice (plan.Op.Mirror).
	op.Mirror = x == y && (xt != nil) != (yt != nil) && len(batch) == 0 && x.NDim() == 2 &&
		equalInts(chunks[0], chunks[1])
	if floatOrComplex(dt) {
		// The BLAS packs panels of both operands; never more than twice
		// their size (tiny blocks), at most MatmulWorkspace.
		op.ExtraMem = min(kernels.MatmulWorkspace, 2*(op.MaxInputRegionBytes(0)+op.MaxInputRegionBytes(1)))
	}
	return out, nil
}

func floatOrComplex(dt DType) bool { return IsFloat(dt) || IsComplex(dt) }

// transposeSource returns the array a is a transpose of when a is
// permute_dims of it swapping only the last two dimensions (a.T, a.mT,
// swapaxes(a, -1, -2)) and nothing else, else nil.
func transposeSource(a *plan.Array) *plan.Array {
	op := a.Op
	n := a.NDim()
	if op == nil || n < 2 || op.Func != "permute_dims" || op.Kind != "blockwise" || len(op.Inputs) != 1 ||
		op.Kernel.Core != "map" || len(op.Kernel.Exprs) != 1 || op.Kernel.Exprs[0].Op != "input" || op.TaskBlocks != nil {
		return nil
	}
	src := op.Inputs[0]
	if src.Array.NDim() != n || src.Array.DType != a.DType || len(src.Dims) != n {
		return nil
	}
	for d, m := range src.Dims {
		want := d
		switch d {
		case n - 2:
			want = n - 1
		case n - 1:
			want = n - 2
		}
		if m.Kind != plan.Affine || m.Step != 1 || m.Start != 0 || m.OutDim != want {
			return nil
		}
	}
	return src.Array
}

func batchShape(a *plan.Array) []int {
	if a.NDim() <= 2 {
		return nil
	}
	return a.Shape[:a.NDim()-2]
}

// pickChunks returns the chunks of batch dimension i from whichever operand
// spans it.
func pickChunks(n int, x *plan.Array, xb []int, y *plan.Array, yb []int, i int) []int {
	nb := 0
	if len(xb) > len(yb) {
		nb = len(xb)
	} else {
		nb = len(yb)
	}
	if j := i - (nb - len(xb)); j >= 0 && xb[j] == n {
		return x.Chunks[j]
	}
	if j := i - (nb - len(yb)); j >= 0 && yb[j] == n {
		return y.Chunks[j]
	}
	return []int{n}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
