package kernels

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/cubego/cubego/zarr"
)

// LinalgFuncs are the whole-matrix functions of Linalg. Each names one
// output of a decomposition; a function with several outputs (qr, svd,
// eigh, slogdet) is run once per output it is asked for.
var LinalgFuncs = []string{
	"cholesky", "cholesky_upper",
	"det", "slogdet_sign", "slogdet_logabsdet",
	"inv", "solve",
	"qr_q", "qr_r", "qr_complete_q", "qr_complete_r",
	"svd_u", "svd_s", "svd_vh", "svd_full_u", "svd_full_vh",
	"eigh_values", "eigh_vectors",
	"eig_values", "eig_vectors",
}

// LinalgCoreShape returns the core (last) dimensions of fn's output for an
// m×n input matrix (and, for solve, a right-hand side with k columns), or an
// error when the input's shape does not suit fn.
func LinalgCoreShape(fn string, m, n, k int) ([]int, error) {
	square := func() error {
		if m != n {
			return fmt.Errorf("kernels: %s needs square matrices, got %d×%d", fn, m, n)
		}
		return nil
	}
	r := min(m, n)
	switch fn {
	case "cholesky", "cholesky_upper", "inv", "eigh_vectors", "eig_vectors":
		return []int{n, n}, square()
	case "det", "slogdet_sign", "slogdet_logabsdet":
		return []int{}, square()
	case "eigh_values", "eig_values":
		return []int{n}, square()
	case "solve":
		return []int{n, k}, square()
	case "qr_q", "svd_u":
		return []int{m, r}, nil
	case "qr_r", "svd_vh":
		return []int{r, n}, nil
	case "qr_complete_q", "svd_full_u":
		return []int{m, m}, nil
	case "qr_complete_r":
		return []int{m, n}, nil
	case "svd_s":
		return []int{r}, nil
	case "svd_full_vh":
		return []int{n, n}, nil
	}
	return nil, fmt.Errorf("kernels: unknown linear algebra function %q", fn)
}

// LinalgWorkspace returns the bytes of scratch memory Linalg uses for one
// m×n matrix of dtype dt beyond its input and output blocks (float64 or
// complex128 copies of the matrix and the factors, and the algorithms' work
// arrays).
func LinalgWorkspace(fn string, dt zarr.DataType, m, n, k int) int64 {
	mm, nn, kk := int64(m), int64(n), int64(k)
	switch fn {
	case "qr_q", "qr_r", "qr_complete_q", "qr_complete_r":
		r := min(mm, nn)
		core, _ := LinalgCoreShape(fn, m, n, k)
		out := int64(1)
		for _, c := range core {
			out *= int64(c)
		}
		if dt == zarr.Complex64 || dt == zarr.Complex128 {
			// complex128 copies of the matrix and the factor, the real
			// result buffer, and the Householder vectors (cQR).
			return 16*(mm*nn+out+r*mm+mm) + 8*out
		}
		// float64 copies of the matrix and the factor, tau, and the
		// blocked work arrays of LAPACK's Geqrf and Orgqr (block size 32).
		cols := r
		if fn == "qr_complete_q" {
			cols = mm
		}
		return 8 * (mm*nn + out + r + 32*(nn+cols) + 2)
	case "svd_u", "svd_s", "svd_vh", "svd_full_u", "svd_full_vh":
		if dt != zarr.Complex64 && dt != zarr.Complex128 {
			// float64 copies of the matrix and the factor, the singular
			// values, and Gesvd's work array: at most an m×n and an r×r
			// matrix and blocked work of block size 32 along m and n.
			r := min(mm, nn)
			core, _ := LinalgCoreShape(fn, m, n, k)
			out := int64(1)
			for _, c := range core {
				out *= int64(c)
			}
			return 8 * (mm*nn + out + r + mm*nn + r*r + 72*(mm+nn) + 64)
		}
	}
	if LinalgComplexOutput(fn) {
		// complex128 copies of the matrix, Z, the vectors' result and
		// Dgeev's real vectors, plus LAPACK's work arrays.
		return 16*4*nn*nn + 8*256*(nn+1)
	}
	return 8 * (mm*nn + mm*mm + nn*nn + nn*kk + 256*(mm+nn+kk+1))
}

// LinalgError reports a matrix for which a function is not defined
// (numpy's LinAlgError): a singular matrix for inv and solve, a matrix that
// is not positive definite for cholesky, or a decomposition that did not
// converge.
type LinalgError struct {
	Func   string
	Matrix int // index of the matrix within the block
	Reason string
}

func (e *LinalgError) Error() string {
	return fmt.Sprintf("kernels: %s: matrix %d of the block %s", e.Func, e.Matrix, e.Reason)
}

// LinalgComplexOutput reports whether fn's output is complex for real input
// (the eigenvalues and eigenvectors of general matrices).
func LinalgComplexOutput(fn string) bool {
	return fn == "eig_values" || fn == "eig_vectors"
}

// LinalgRealOutput reports whether fn's output is real for complex input
// (singular values, eigenvalues, log|det|).
func LinalgRealOutput(fn string) bool {
	return fn == "svd_s" || fn == "eigh_values" || fn == "slogdet_logabsdet"
}

// Linalg applies whole-matrix function fn to every matrix of a stack: in[0]
// is (..., m, n) and, for solve, in[1] is (..., n, k) with the same batch
// shape; out has the batch shape followed by LinalgCoreShape. Operands are
// C-contiguous and of one dtype: float32 or float64 (LAPACK through gonum,
// in float64), or complex64 or complex128 (the algorithms of
// linalg_complex.go, in complex128); results are rounded to out's dtype,
// which is the input's, or its real dtype where LinalgRealOutput.
func Linalg(fn string, out Operand, in []Operand) error {
	clearUpper()
	want := 1
	if fn == "solve" {
		want = 2
	}
	if len(in) != want {
		return fmt.Errorf("kernels: %s takes %d operands, got %d", fn, want, len(in))
	}
	dt := in[0].DType
	isComplex := dt == zarr.Complex64 || dt == zarr.Complex128
	if dt != zarr.Float32 && dt != zarr.Float64 && !isComplex {
		return unsupported(fn, dt)
	}
	outDT := dt
	if isComplex && LinalgRealOutput(fn) {
		outDT = zarr.Float32
		if dt == zarr.Complex128 {
			outDT = zarr.Float64
		}
	}
	if LinalgComplexOutput(fn) {
		switch dt {
		case zarr.Float32, zarr.Complex64:
			outDT = zarr.Complex64
		default:
			outDT = zarr.Complex128
		}
	}
	if out.DType != outDT {
		return fmt.Errorf("kernels: %s of %s gives %s, not %s", fn, dt, outDT, out.DType)
	}
	for _, o := range in {
		if o.DType != dt {
			return fmt.Errorf("kernels: %s of %s and %s: dtypes must match", fn, dt, o.DType)
		}
		if len(o.Shape) < 2 {
			return fmt.Errorf("kernels: %s needs matrices, got shape %v", fn, o.Shape)
		}
	}
	a := in[0]
	nd := len(a.Shape)
	m, n := a.Shape[nd-2], a.Shape[nd-1]
	k := 0
	if fn == "solve" {
		b := in[1].Shape
		if len(b) != nd || b[nd-2] != n || !sameShape(b[:nd-2], a.Shape[:nd-2]) {
			return fmt.Errorf("kernels: solve shapes %v and %v do not match", a.Shape, b)
		}
		k = b[nd-1]
	}
	core, err := LinalgCoreShape(fn, m, n, k)
	if err != nil {
		return err
	}
	batch, err := numElements(a.Shape[:nd-2])
	if err != nil {
		return err
	}
	outShape := append(append([]int{}, a.Shape[:nd-2]...), core...)
	if !sameShape(out.Shape, outShape) {
		return fmt.Errorf("kernels: %s of shape %v gives %v, not %v", fn, a.Shape, outShape, out.Shape)
	}
	inSize := m * n
	outSize, _ := numElements(core)
	wrap := func(i int, err error) error {
		if e, ok := err.(*LinalgError); ok {
			e.Matrix = i
		}
		return err
	}
	if LinalgComplexOutput(fn) {
		res := make([]complex128, outSize)
		var x []float64
		var cx []complex128
		if isComplex {
			cx = make([]complex128, inSize)
		} else {
			x = make([]float64, inSize)
		}
		for i := range batch {
			if isComplex {
				readComplex128(cx, a, i*inSize)
			} else {
				readFloat64(x, a, i*inSize)
			}
			if err := linalgEig(fn, res, x, cx, n); err != nil {
				return wrap(i, err)
			}
			writeComplex128(out, i*outSize, res)
		}
		return nil
	}
	if isComplex {
		x := make([]complex128, inSize)
		var rhs []complex128
		if fn == "solve" {
			rhs = make([]complex128, n*k)
		}
		res := make([]complex128, outSize)
		resReal := make([]float64, outSize)
		for i := range batch {
			readComplex128(x, a, i*inSize)
			if rhs != nil {
				readComplex128(rhs, in[1], i*n*k)
			}
			if err := linalgComplex(fn, res, resReal, x, rhs, m, n, k); err != nil {
				return wrap(i, err)
			}
			if LinalgRealOutput(fn) {
				writeFloat64(out, i*outSize, resReal)
			} else {
				writeComplex128(out, i*outSize, res)
			}
		}
		return nil
	}
	x := make([]float64, inSize)
	var rhs []float64
	if fn == "solve" {
		rhs = make([]float64, n*k)
	}
	res := make([]float64, outSize)
	for i := range batch {
		readFloat64(x, a, i*inSize)
		if rhs != nil {
			readFloat64(rhs, in[1], i*n*k)
		}
		if err := linalgMatrix(fn, res, x, rhs, m, n, k); err != nil {
			return wrap(i, err)
		}
		writeFloat64(out, i*outSize, res)
	}
	return nil
}

func readFloat64(dst []float64, o Operand, off int) {
	switch o.DType {
	case zarr.Float64:
		copy(dst, as[float64](o.Data)[off:off+len(dst)])
	case zarr.Float32:
		for i, v := range as[float32](o.Data)[off : off+len(dst)] {
			dst[i] = float64(v)
		}
	}
}

func writeFloat64(o Operand, off int, src []float64) {
	switch o.DType {
	case zarr.Float64:
		copy(as[float64](o.Data)[off:off+len(src)], src)
	case zarr.Float32:
		dst := as[float32](o.Data)[off : off+len(src)]
		for i, v := range src {
			dst[i] = float32(v)
		}
	}
}

func readComplex128(dst []complex128, o Operand, off int) {
	switch o.DType {
	case zarr.Complex128:
		copy(dst, as[complex128](o.Data)[off:off+len(dst)])
	case zarr.Complex64:
		for i, v := range as[complex64](o.Data)[off : off+len(dst)] {
			dst[i] = complex128(v)
		}
	}
}

func writeComplex128(o Operand, off int, src []complex128) {
	switch o.DType {
	case zarr.Complex128:
		copy(as[complex128](o.Data)[off:off+len(src)], src)
	case zarr.Complex64:
		dst := as[complex64](o.Data)[off : off+len(src)]
		for i, v := range src {
			dst[i] = complex64(v)
		}
	}
}

// linalgMatrix computes fn of the m×n row-major matrix x (destroyed) into
// res (row-major, LinalgCoreShape).
func linalgMatrix(fn string, res, x, rhs []float64, m, n, k int) error {
	a := blas64.General{Rows: m, Cols: n, Stride: max(n, 1), Data: x}
	switch fn {
	case "cholesky", "cholesky_upper":
		return cholesky(fn, res, a, fn == "cholesky_upper")
	case "det", "slogdet_sign", "slogdet_logabsdet":
		logAbs, sign, det := luDeterminant(a)
		switch fn {
		case "det":
			res[0] = det
		case "slogdet_sign":
			res[0] = sign
		default:
			res[0] = logAbs
		}
		return nil
	case "inv":
		ipiv := make([]int, n)
		if n == 0 {
			return nil
		}
		if !lapack64.Getrf(a, ipiv) {
			return &LinalgError{Func: "inv", Reason: "is singular"}
		}
		work := []float64{0}
		lapack64.Getri(a, ipiv, work, -1)
		work = make([]float64, max(int(work[0]), n))
		if !lapack64.Getri(a, ipiv, work, len(work)) {
			return &LinalgError{Func: "inv", Reason: "is singular"}
		}
		copy(res, x)
		return nil
	case "solve":
		if n == 0 || k == 0 {
			return nil
		}
		ipiv := make([]int, n)
		if !lapack64.Getrf(a, ipiv) {
			return &LinalgError{Func: "solve", Reason: "is singular"}
		}
		copy(res, rhs)
		b := blas64.General{Rows: n, Cols: k, Stride: k, Data: res}
		lapack64.Getrs(blas.NoTrans, a, b, ipiv)
		return nil
	case "qr_q", "qr_r", "qr_complete_q", "qr_complete_r":
		return qr(fn, res, a)
	case "svd_u", "svd_s", "svd_vh", "svd_full_u", "svd_full_vh":
		return svd(fn, res, a)
	case "eigh_values", "eigh_vectors":
		return eigh(fn, res, a)
	}
	return fmt.Errorf("kernels: unknown linear algebra function %q", fn)
}

// cholesky factors the symmetric positive-definite a as L·Lᵀ (reading its
// lower triangle) or Uᵀ·U (upper triangle), zeroing the other triangle.
func cholesky(fn string, res []float64, a blas64.General, upper bool) error {
	n := a.Rows
	uplo := blas.Lower
	if upper {
		uplo = blas.Upper
	}
	if n == 0 {
		return nil
	}
	_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: uplo, N: n, Stride: a.Stride, Data: a.Data})
	if !ok {
		return &LinalgError{Func: fn, Reason: "is not positive definite"}
	}
	for i := range n {
		for j := range n {
			keep := (upper && j >= i) || (!upper && j <= i)
			if keep {
				res[i*n+j] = a.Data[i*a.Stride+j]
			} else {
				res[i*n+j] = 0
			}
		}
	}
	return nil
}

// luDeterminant returns log|det a|, the sign of det a (0 when singular) and
// det a itself (the product of U's diagonal and the pivots' sign, as LAPACK
// users compute it).
func luDeterminant(a blas64.General) (logAbs, sign, det float64) {
	n := a.Rows
	ipiv := make([]int, n)
	if n > 0 {
		lapack64.Getrf(a, ipiv)
	}
	sign, det = 1, 1
	for i := range n {
		v := a.Data[i*a.Stride+i]
		if ipiv[i] != i {
			sign, det = -sign, -det
		}
		det *= v
		switch {
		case v < 0:
			sign = -sign
		case v == 0:
			sign = 0
		case math.IsNaN(v):
			sign = math.NaN()
		}
		logAbs += math.Log(math.Abs(v))
	}
	if sign == 0 {
		logAbs = math.Inf(-1)
	}
	return logAbs, sign, det
}

// qr computes the Householder QR factorization of the m×n matrix a (any
// shape): Q is m×min(m,n) and R min(m,n)×n (reduced), or Q m×m and R m×n
// (complete).
func qr(fn string, res []float64, a blas64.General) error {
	m, n := a.Rows, a.Cols
	r := min(m, n)
	tau := make([]float64, r)
	if r > 0 {
		work := []float64{0}
		lapack64.Geqrf(a, tau, work, -1)
		work = make([]float64, max(int(work[0]), n, 1))
		lapack64.Geqrf(a, tau, work, len(work))
	}
	switch fn {
	case "qr_r", "qr_complete_r":
		rows := r
		if fn == "qr_complete_r" {
			rows = m
		}
		for i := range rows {
			for j := range n {
				v := 0.0
				if i < r && j >= i {
					v = a.Data[i*a.Stride+j]
				}
				res[i*n+j] = v
			}
		}
		return nil
	}
	cols := r
	if fn == "qr_complete_q" {
		cols = m
	}
	if m == 0 || cols == 0 {
		return nil
	}
	// The reflectors are the first r columns of a, below the diagonal.
	q := blas64.General{Rows: m, Cols: cols, Stride: cols, Data: res}
	clear(res)
	for i := range m {
		for j := range min(cols, n) {
			q.Data[i*cols+j] = a.Data[i*a.Stride+j]
		}
	}
	work := []float64{0}
	lapack64.Orgqr(q, tau, work, -1)
	work = make([]float64, max(int(work[0]), cols, 1))
	lapack64.Orgqr(q, tau, work, len(work))
	return nil
}

// svd computes the singular value decomposition a = U·diag(s)·Vh with
// singular values in descending order: reduced (U m×r, Vh r×n) or full
// (U m×m, Vh n×n).
func svd(fn string, res []float64, a blas64.General) error {
	m, n := a.Rows, a.Cols
	r := min(m, n)
	if r == 0 {
		// No singular values; full U or Vh of an empty matrix is the identity.
		size := 0
		switch fn {
		case "svd_full_u":
			size = m
		case "svd_full_vh":
			size = n
		}
		clear(res)
		for i := range size {
			res[i*size+i] = 1
		}
		return nil
	}
	jobU, jobVT := lapack.SVDNone, lapack.SVDNone
	var u, vt blas64.General
	s := make([]float64, r)
	switch fn {
	case "svd_u":
		jobU, u = lapack.SVDStore, blas64.General{Rows: m, Cols: r, Stride: r, Data: res}
	case "svd_full_u":
		jobU, u = lapack.SVDAll, blas64.General{Rows: m, Cols: m, Stride: m, Data: res}
	case "svd_vh":
		jobVT, vt = lapack.SVDStore, blas64.General{Rows: r, Cols: n, Stride: n, Data: res}
	case "svd_full_vh":
		jobVT, vt = lapack.SVDAll, blas64.General{Rows: n, Cols: n, Stride: n, Data: res}
	}
	if u.Data == nil {
		u = blas64.General{Stride: 1, Data: []float64{0}}
	}
	if vt.Data == nil {
		vt = blas64.General{Stride: 1, Data: []float64{0}}
	}
	work := []float64{0}
	lapack64.Gesvd(jobU, jobVT, a, u, vt, s, work, -1)
	work = make([]float64, max(int(work[0]), 5*r+max(m, n), 1))
	if !lapack64.Gesvd(jobU, jobVT, a, u, vt, s, work, len(work)) {
		return &LinalgError{Func: "svd", Reason: "did not converge"}
	}
	if fn == "svd_s" {
		copy(res, s)
	}
	return nil
}

// eigh computes the eigenvalues (ascending) or eigenvectors (columns) of
// the symmetric matrix a from its lower triangle.
func eigh(fn string, res []float64, a blas64.General) error {
	n := a.Rows
	if n == 0 {
		return nil
	}
	jobz := lapack.EVNone
	if fn == "eigh_vectors" {
		jobz = lapack.EVCompute
	}
	w := make([]float64, n)
	sym := blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: a.Stride, Data: a.Data}
	work := []float64{0}
	lapack64.Syev(jobz, sym, w, work, -1)
	work = make([]float64, max(int(work[0]), 3*n))
	if !lapack64.Syev(jobz, sym, w, work, len(work)) {
		return &LinalgError{Func: "eigh", Reason: "did not converge"}
	}
	if fn == "eigh_values" {
		copy(res, w)
		return nil
	}
	for i := range n {
		copy(res[i*n:(i+1)*n], a.Data[i*a.Stride:i*a.Stride+n])
	}
	return nil
}
