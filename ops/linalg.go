package ops

import (
	"fmt"
	"slices"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// blockFuncs are kernels of whole blocks, keyed by their Kernel.Core, that
// the files defining their ops register; a TaskKernel runs them in one step
// with the op's kernel, the output block and the input blocks.
var blockFuncs = map[string]func(k plan.Kernel, out Block, ins []Block) error{}

func init() {
	for _, fn := range kernels.LinalgFuncs {
		blockFuncs[linalgCore(fn)] = func(_ plan.Kernel, out Block, ins []Block) error {
			operands := make([]kernels.Operand, len(ins))
			for i, b := range ins {
				operands[i] = kernels.Contiguous(b.DType, b.Data, b.Shape)
			}
			return linalgBlockError(kernels.Linalg(fn, kernels.Contiguous(out.DType, out.Data, out.Shape), operands))
		}
	}
}

func linalgCore(fn string) string { return "linalg_" + fn }

// Linalg applies a whole-matrix function of the linear algebra extension to
// the stacks of matrices in the last two dimensions of x (and, for "solve",
// of the right-hand sides b, shaped (..., n, k) with x's batch shape).
//
// fn is one of the names listed in the package documentation ("Function
// names"); a decomposition with several outputs has one function per
// output, each computing the whole decomposition (e.g. "qr_q" and "qr_r"),
// so asking for both factors factorizes twice.
//
// Each matrix must fit one task: x is rechunked so that its last two
// dimensions are whole, keeping its batch chunks when the blocks fit
// allowed_mem and one matrix per block otherwise; when even one matrix does
// not fit, Linalg refuses with an error naming the sizes — except for the
// reduced QR and SVD of a 2-D matrix (qr_q, qr_r, svd_u, svd_s, svd_vh),
// which then run by TSQR in bounded memory (tsqr.go). The arithmetic is
// float64 (LAPACK through gonum) or complex128 (see kernels.Linalg); integer
// and bool inputs compute in float64, and single-precision inputs give
// single-precision results. Singular values, eigenvalues and log|det| are
// real for complex inputs; the eigenvalues and eigenvectors of general
// matrices (eig_values, eig_vectors) are complex for real ones.
func Linalg(fn string, x, b *plan.Array) (*plan.Array, error) {
	if !slices.Contains(kernels.LinalgFuncs, fn) {
		return nil, plan.Errorf(plan.ErrNotImplemented, "unknown linear algebra function %q", fn)
	}
	if (fn == "solve") != (b != nil) {
		return nil, plan.Errorf(plan.ErrValue, "linalg %s: solve takes a right-hand side, other functions do not", fn)
	}
	inputs := []*plan.Array{x}
	if b != nil {
		inputs = append(inputs, b)
	}
	dt := x.DType
	for _, a := range inputs {
		if a.NDim() < 2 {
			return nil, plan.Errorf(plan.ErrValue, "linalg %s needs arrays with at least two dimensions, got shape %s", fn, FormatShape(a.Shape))
		}
		dt = ResultType(dt, a.DType)
	}
	dt = FloatOf(dt)
	outDT := dt
	switch {
	case kernels.LinalgRealOutput(fn):
		outDT = RealOf(dt)
	case kernels.LinalgComplexOutput(fn):
		outDT = ComplexOf(dt)
	}
	nd := x.NDim()
	m, n := x.Shape[nd-2], x.Shape[nd-1]
	k := 0
	batch := x.Shape[:nd-2]
	if b != nil {
		if b.NDim() != nd || b.Shape[nd-2] != n || !slices.Equal(b.Shape[:nd-2], batch) {
			return nil, plan.Errorf(plan.ErrValue, "linalg solve: right-hand sides of shape %s do not match matrices of shape %s", FormatShape(b.Shape), FormatShape(x.Shape))
		}
		k = b.Shape[nd-1]
	}
	core, err := kernels.LinalgCoreShape(fn, m, n, k)
	if err != nil {
		return nil, plan.Errorf(plan.ErrValue, "linalg %s: arrays of shape %s: %v", fn, FormatShape(x.Shape), err)
	}
	shape := append(append([]int{}, batch...), core...)
	for i, a := range inputs {
		if inputs[i], err = AsType(a, dt); err != nil {
			return nil, err
		}
	}
	x = inputs[0]
	if plan.Prod(shape) == 0 || m*n == 0 {
		return nil, plan.Errorf(plan.ErrNotImplemented, "linalg %s of empty matrices is left to the caller", fn)
	}
	if nd == 2 && tsqrFuncs[fn] {
		// The factors of one decomposition take the same path, so that
		// their signs agree (Q with R, U with Vh).
		if whole := tsqrWholeMem(fn, m, n, dt, x.Spec); whole > x.Spec.AllowedMem {
			return tsqrFunction(fn, x, whole)
		}
	}
	perMatrix, extra := linalgTaskMem(fn, m, n, k, dt, outDT, x.Spec)
	room := x.Spec.AllowedMem - x.Spec.ReservedMem - extra
	if room < perMatrix {
		hint := "raise allowed_mem"
		if reduced, ok := reducedFuncs[fn]; ok && nd == 2 {
			hint += fmt.Sprintf(" (the reduced factors, %s, of tall-and-skinny matrices are computed in parts)", reduced)
		}
		return nil, plan.Errorf(plan.ErrValue,
			"linalg %s needs whole %d×%d matrices in one task (about %s per task), which exceeds allowed_mem of %s; %s",
			fn, m, n, plan.FormatBytes(x.Spec.ReservedMem+extra+perMatrix), plan.FormatBytes(x.Spec.AllowedMem), hint)
	}
	// Batch chunks: x's own when a block of them fits, else one matrix per block.
	batchChunks := make([][]int, len(batch))
	var perBlock int64 = 1
	for d := range batch {
		batchChunks[d] = x.Chunks[d]
		perBlock = plan.MulSat(perBlock, int64(plan.MaxChunk(x.Chunks[d])))
	}
	if plan.MulSat(perBlock, perMatrix) > room {
		for d, size := range batch {
			c, err := plan.RegularChunks(size, 1)
			if err != nil {
				return nil, err
			}
			batchChunks[d] = c
		}
	}
	chunks := make([][]int, len(shape))
	copy(chunks, batchChunks)
	for i, c := range core {
		chunks[len(batch)+i] = []int{c}
	}
	ins := make([]plan.Input, len(inputs))
	for i, a := range inputs {
		spec := make([]any, nd)
		for d := range batch {
			spec[d] = batchChunks[d]
		}
		spec[nd-2], spec[nd-1] = -1, -1
		whole, err := Rechunk(a, spec)
		if err != nil {
			return nil, err
		}
		dims := make([]plan.DimMap, nd)
		for d := range batch {
			dims[d] = plan.DimMap{Kind: plan.Affine, OutDim: d, Step: 1}
		}
		dims[nd-2] = plan.DimMap{Kind: plan.Full, OutDim: -1}
		dims[nd-1] = plan.DimMap{Kind: plan.Full, OutDim: -1}
		ins[i] = plan.Input{Array: whole, Dims: dims}
	}
	spec, err := plan.CommonSpec(arraysOf(ins)...)
	if err != nil {
		return nil, err
	}
	out := plan.NewArray(shape, outDT, chunks, spec)
	op := plan.NewOp(fn, "blockwise", ins, out, plan.Kernel{Core: linalgCore(fn)})
	op.ExtraMem = extra
	return out, nil
}

// reducedFuncs name the argument that asks for the reduced factors instead
// of the complete ones, which TSQR computes in parts.
var reducedFuncs = map[string]string{
	"qr_complete_q": "mode='reduced'", "qr_complete_r": "mode='reduced'",
	"svd_full_u": "full_matrices=False", "svd_full_vh": "full_matrices=False",
}

// linalgTaskMem returns the bytes a task of Linalg fn needs per m×n matrix
// it holds (its input, with k right-hand-side columns, read with the work
// dir's read copies, and its output, written with the write copies plus the
// kernel's result buffer), and the scratch memory of the kernel.
func linalgTaskMem(fn string, m, n, k int, dt, outDT DType, spec *plan.Spec) (perMatrix, extra int64) {
	core, _ := kernels.LinalgCoreShape(fn, m, n, k)
	copies := plan.CopiesFor(spec.WorkDir)
	perIn := int64(m*n+n*k) * int64(dt.Size()) * (1 + copies.Read)
	perOut := plan.Prod(core) * int64(outDT.Size()) * (2 + copies.Write)
	return perIn + perOut, kernels.LinalgWorkspace(fn, dt, m, n, k)
}
