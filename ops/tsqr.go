package ops

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/cubego/cubego/ops/internal/kernels"
	"github.com/cubego/cubego/plan"
)

// TSQR: QR and SVD of tall-and-skinny matrices in bounded memory.
//
// When a whole 2-D matrix does not fit one task, Linalg computes qr_q,
// qr_r, svd_u, svd_s and svd_vh by the direct tall-and-skinny QR of Benson,
// Gleich and Demmel ("Direct QR factorizations for tall-and-skinny matrices
// in MapReduce architectures", 2013), as Cubed does. For an m×n matrix A in
// k row blocks A_i (one block along the columns):
//
//  1. each task factorizes one row block, A_i = Q1_i R1_i; Q1 has A's shape
//     and chunks and the n×n factors R1_i are stacked into R1 (k·n × n);
//  2. R1 = Q2 R: when R1 fits one task it is factorized whole (Linalg),
//     otherwise its row blocks are merged tsqrSplitEvery at a time (fewer,
//     down to 2, when that many do not fit one task) and step 1 recurses on
//     it, so each level shrinks the stack by that factor;
//  3. each task of Q multiplies Q1_i by the rows of Q2 that belong to its
//     block: Q_i = Q1_i Q2_i.
//
// So every task holds one row block (or n×n factors), never the matrix. A
// row block with fewer rows than columns is padded: its Q1_i gets zero
// columns and its R1_i zero rows, which leaves A_i = Q1_i R1_i unchanged.
// The SVD is the SVD of the small R, R = U_R S Vh, with U = Q U_R; a short
// and wide matrix (one row block, several column blocks) is factorized
// through its (conjugate) transpose.

// tsqrFuncs are the Linalg functions that fall back to TSQR for 2-D
// matrices too large for one task.
var tsqrFuncs = map[string]bool{"qr_q": true, "qr_r": true, "svd_u": true, "svd_s": true, "svd_vh": true}

// tsqrSplitEvery is how many row blocks of a stack of R factors one task of
// the next level merges (Cubed's split_every).
const tsqrSplitEvery = 4

func init() {
	for _, fn := range []string{"qr_q", "qr_r"} {
		blockFuncs[tsqrCore(fn)] = func(_ plan.Kernel, out Block, ins []Block) error {
			return tsqrBlock(fn, out, ins[0])
		}
	}
}

func tsqrCore(fn string) string { return "tsqr_" + fn }

// tsqrWholeMem returns the most memory a task computing one of the factors
// of fn's decomposition (qr or svd) of a whole m×n matrix of dtype dt needs.
func tsqrWholeMem(fn string, m, n int, dt DType, spec *plan.Spec) int64 {
	family := []string{"qr_q", "qr_r"}
	if fn != "qr_q" && fn != "qr_r" {
		family = []string{"svd_u", "svd_s", "svd_vh"}
	}
	var most int64
	for _, f := range family {
		outDT := dt
		if kernels.LinalgRealOutput(f) {
			outDT = RealOf(dt)
		}
		perMatrix, extra := linalgTaskMem(f, m, n, 0, dt, outDT, spec)
		most = max(most, spec.ReservedMem+extra+perMatrix)
	}
	return most
}

// tsqrFunction returns output fn of the 2-D floating matrix x by TSQR;
// whole is the memory a task factorizing all of x would need.
func tsqrFunction(fn string, x *plan.Array, whole int64) (*plan.Array, error) {
	m, n := x.Shape[0], x.Shape[1]
	svd := fn != "qr_q" && fn != "qr_r"
	if svd && len(x.Chunks[0]) == 1 && len(x.Chunks[1]) > 1 {
		// Short and wide: x = (xᴴ)ᴴ, and xᴴ = U S Vh gives x = Vhᴴ S Uᴴ.
		xt, err := conjugateTranspose(x)
		if err != nil {
			return nil, err
		}
		swapped := map[string]string{"svd_u": "svd_vh", "svd_vh": "svd_u", "svd_s": "svd_s"}[fn]
		out, err := tsqrFunction(swapped, xt, whole)
		if err != nil || fn == "svd_s" {
			return out, err
		}
		return conjugateTranspose(out)
	}
	what := "qr"
	if svd {
		what = "svd"
	}
	if len(x.Chunks[1]) != 1 || len(x.Chunks[0]) == 1 {
		return nil, plan.Errorf(plan.ErrValue,
			"linalg %s: a whole %d×%d matrix needs about %s in one task, which exceeds allowed_mem of %s, "+
				"and with chunks %s it cannot be factorized in parts: %s only supports tall-and-skinny "+
				"(single column chunk) arrays beyond one task; rechunk so there is a single column chunk "+
				"and several row chunks, or raise allowed_mem",
			what, m, n, plan.FormatBytes(whole), plan.FormatBytes(x.Spec.AllowedMem), formatChunks(x.Chunks), what)
	}
	q, r, err := tsqrShared(x)
	if err != nil {
		return nil, err
	}
	switch fn {
	case "qr_q":
		return q, nil
	case "qr_r":
		return r, nil
	}
	// R is n×n and one chunk: its SVD is one task.
	f, err := Linalg(fn, r, nil)
	if err != nil || fn != "svd_u" {
		return f, err
	}
	return Matmul(q, f)
}

// tsqrRecent remembers the factors of the last few matrices factorized by
// TSQR, so that the calls asking for each output of one decomposition (Q,
// then R; U, S, then Vh) share one factorization instead of each building
// its own. It keeps at most tsqrRecentSize plans alive.
var tsqrRecent struct {
	sync.Mutex
	entries []tsqrEntry // the most recent last
}

type tsqrEntry struct{ x, q, r *plan.Array }

const tsqrRecentSize = 8

// tsqrShared returns tsqr(x), reusing the factors of a recent call for x.
func tsqrShared(x *plan.Array) (q, r *plan.Array, err error) {
	tsqrRecent.Lock()
	for _, e := range tsqrRecent.entries {
		if e.x == x {
			tsqrRecent.Unlock()
			return e.q, e.r, nil
		}
	}
	tsqrRecent.Unlock()
	if q, r, err = tsqr(x); err != nil {
		return nil, nil, err
	}
	tsqrRecent.Lock()
	defer tsqrRecent.Unlock()
	tsqrRecent.entries = append(tsqrRecent.entries, tsqrEntry{x, q, r})
	if n := len(tsqrRecent.entries); n > tsqrRecentSize {
		tsqrRecent.entries = slices.Delete(tsqrRecent.entries, 0, n-tsqrRecentSize)
	}
	return q, r, nil
}

// tsqr returns the reduced QR factors of x (m×n, several row blocks, one
// column block): Q with x's chunks and R as one n×n chunk.
func tsqr(x *plan.Array) (q, r *plan.Array, err error) {
	n := x.Shape[1]
	k := len(x.Chunks[0])
	q1, err := tsqrStep(x, "qr_q")
	if err != nil {
		return nil, nil, err
	}
	r1, err := tsqrStep(x, "qr_r")
	if err != nil {
		return nil, nil, err
	}
	var q2 *plan.Array
	perMatrix, extra := linalgTaskMem("qr_q", k*n, n, 0, x.DType, x.DType, x.Spec)
	if perMatrix+extra <= x.Spec.AllowedMem-x.Spec.ReservedMem {
		if q2, err = Linalg("qr_q", r1, nil); err != nil {
			return nil, nil, err
		}
		if r, err = Linalg("qr_r", r1, nil); err != nil {
			return nil, nil, err
		}
	} else {
		merged, err := tsqrMerge(r1)
		if err != nil {
			return nil, nil, err
		}
		if q2, r, err = tsqr(merged); err != nil {
			return nil, nil, err
		}
	}
	// Q2's rows in blocks of n, one per row block of x.
	if q2, err = Rechunk(q2, []any{n, n}); err != nil {
		return nil, nil, err
	}
	ranges := make([][2]int, k)
	for i := range ranges {
		ranges[i] = [2]int{i * n, (i + 1) * n}
	}
	spec, err := plan.CommonSpec(q1, q2)
	if err != nil {
		return nil, nil, err
	}
	q = plan.NewArray(x.Shape, x.DType, x.Chunks, spec)
	plan.NewOp("qr", "blockwise", []plan.Input{
		{Array: q1, Dims: []plan.DimMap{{Kind: plan.Affine, OutDim: 0, Step: 1}, {Kind: plan.Full, OutDim: -1}}},
		{Array: q2, Dims: []plan.DimMap{{Kind: plan.Ranges, OutDim: 0, Ranges: ranges}, {Kind: plan.Affine, OutDim: 1, Step: 1}}},
	}, q, plan.Kernel{Core: "matmul", Exprs: []*plan.Expr{plan.InputExpr(0, q1.DType), plan.InputExpr(1, q2.DType)}})
	return q, r, nil
}

// tsqrMerge returns the stacked factors r1 with tsqrSplitEvery of their row
// blocks merged into one, or fewer (down to 2) when the factorization of
// that many does not fit one task, for the next level of TSQR.
func tsqrMerge(r1 *plan.Array) (*plan.Array, error) {
	n := r1.Shape[1]
	for f := tsqrSplitEvery; f >= 2 && len(r1.Chunks[0]) > 1; f-- {
		merged, err := Rechunk(r1, []any{f * n, n})
		if err != nil {
			return nil, err
		}
		q, err := tsqrStep(merged, "qr_q")
		if err != nil {
			return nil, err
		}
		if plan.ProjectedMem(q.Op) <= r1.Spec.AllowedMem {
			return merged, nil
		}
	}
	return nil, plan.Errorf(plan.ErrValue,
		"linalg qr: the stacked %d×%d factors R of the row blocks do not fit one task of allowed_mem %s, "+
			"and neither does the factorization of two of them; raise allowed_mem",
		n, n, plan.FormatBytes(r1.Spec.AllowedMem))
}

// tsqrStep returns Q1 (fn "qr_q": x's shape and chunks) or the stacked R1
// factors (fn "qr_r": one n×n block per row block of x) of TSQR's first step.
func tsqrStep(x *plan.Array, fn string) (*plan.Array, error) {
	n := x.Shape[1]
	k := len(x.Chunks[0])
	in := plan.Input{Array: x, Dims: plan.Identity(2)}
	shape, chunks := x.Shape, x.Chunks
	if fn == "qr_r" {
		shape = []int{k * n, n}
		rows, err := plan.RegularChunks(k*n, n)
		if err != nil {
			return nil, err
		}
		chunks = [][]int{rows, {n}}
		ranges := make([][2]int, k)
		start := 0
		for i, c := range x.Chunks[0] {
			ranges[i] = [2]int{start, start + c}
			start += c
		}
		in.Dims[0] = plan.DimMap{Kind: plan.Ranges, OutDim: 0, Ranges: ranges}
	}
	out := plan.NewArray(shape, x.DType, chunks, x.Spec)
	op := plan.NewOp("qr", "blockwise", []plan.Input{in}, out, plan.Kernel{Core: tsqrCore(fn)})
	rows := plan.MaxChunk(x.Chunks[0])
	op.ExtraMem = kernels.LinalgWorkspace(fn, x.DType, rows, n, 0)
	if rows < n {
		// The unpadded factor, before it is copied into the padded block.
		core, _ := kernels.LinalgCoreShape(fn, rows, n, 0)
		op.ExtraMem += plan.Prod(core) * int64(x.DType.Size())
	}
	return out, nil
}

// tsqrBlock writes the reduced QR factor fn of the m×n block in into out,
// padded to m×n (Q) or n×n (R) with zeros when m < n.
func tsqrBlock(fn string, out, in Block) error {
	m, n := in.Shape[0], in.Shape[1]
	src := []kernels.Operand{kernels.Contiguous(in.DType, in.Data, in.Shape)}
	if m >= n {
		return linalgBlockError(kernels.Linalg(fn, kernels.Contiguous(out.DType, out.Data, out.Shape), src))
	}
	core, err := kernels.LinalgCoreShape(fn, m, n, 0)
	if err != nil {
		return err
	}
	elem := out.DType.Size()
	tmp := make([]byte, int(plan.Prod(core))*elem)
	if err := kernels.Linalg(fn, kernels.Contiguous(out.DType, tmp, core), src); err != nil {
		return linalgBlockError(err)
	}
	clear(out.Data)
	row, outRow := core[1]*elem, out.Shape[1]*elem
	for i := range core[0] {
		copy(out.Data[i*outRow:i*outRow+row], tmp[i*row:(i+1)*row])
	}
	return nil
}

// linalgBlockError turns a kernel's LinalgError into a value error.
func linalgBlockError(err error) error {
	var le *kernels.LinalgError
	if errors.As(err, &le) {
		return plan.Errorf(plan.ErrValue, "linalg.%v", err)
	}
	return err
}

// conjugateTranspose returns xᴴ of a 2-D array (xᵀ for real dtypes).
func conjugateTranspose(x *plan.Array) (*plan.Array, error) {
	t, err := PermuteDims(x, []int{1, 0})
	if err != nil || !IsComplex(t.DType) {
		return t, err
	}
	return Elemwise("conj", Operand{Array: t})
}

func formatChunks(chunks [][]int) string {
	parts := make([]string, len(chunks))
	for i, c := range chunks {
		parts[i] = FormatShape(c)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
