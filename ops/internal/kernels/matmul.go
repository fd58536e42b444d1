package kernels

import (
	"bytes"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/blas/cblas64"

	"github.com/cubego/cubego/zarr"
)

// Matmul computes acc = a @ b (first) or acc += a @ b over a stack of
// matrices: a is (..., m, k), b (..., k, n) and acc (..., m, n), all
// C-contiguous with the same batch shape and dtype. Floats and complex
// numbers use gemm (gemm.go) where the CPU and build have its SIMD
// kernels, else gonum's Gemm; integers wrap; bool is an OR of ANDs. 1-D
// operands are the caller's to reshape.
func Matmul(acc, a, b Operand, first bool) error {
	return MatmulTrans(acc, a, b, false, false, first)
}

// MatmulTrans is Matmul with transposed operands: with transA, a holds
// (..., k, m) and the product uses its matrices transposed (not
// conjugated); likewise b (..., n, k) with transB. Only float and complex
// types take transposed operands.
func MatmulTrans(acc, a, b Operand, transA, transB, first bool) error {
	clearUpper()
	dt := acc.DType
	if a.DType != dt || b.DType != dt {
		return fmt.Errorf("kernels: matmul of %s and %s into %s: dtypes must match", a.DType, b.DType, dt)
	}
	nd := len(acc.Shape)
	if nd < 2 || len(a.Shape) != nd || len(b.Shape) != nd {
		return fmt.Errorf("kernels: matmul shapes %v @ %v -> %v: need equal ranks >= 2", a.Shape, b.Shape, acc.Shape)
	}
	m, k, n := a.Shape[nd-2], a.Shape[nd-1], b.Shape[nd-1]
	if transA {
		m, k = k, m
	}
	bk := b.Shape[nd-2]
	if transB {
		n, bk = bk, n
	}
	if (transA || transB) && dt != zarr.Float32 && dt != zarr.Float64 && dt != zarr.Complex64 && dt != zarr.Complex128 {
		return fmt.Errorf("kernels: matmul of transposed %s operands is not supported", dt)
	}
	if bk != k || acc.Shape[nd-2] != m || acc.Shape[nd-1] != n ||
		!sameShape(a.Shape[:nd-2], acc.Shape[:nd-2]) || !sameShape(b.Shape[:nd-2], acc.Shape[:nd-2]) {
		return fmt.Errorf("kernels: matmul shapes %v @ %v -> %v do not match", a.Shape, b.Shape, acc.Shape)
	}
	_, c, err := checkDst(acc)
	if err != nil {
		return err
	}
	_, ad, err := checkDst(a)
	if err != nil {
		return fmt.Errorf("kernels: matmul left operand: %w", err)
	}
	_, bd, err := checkDst(b)
	if err != nil {
		return fmt.Errorf("kernels: matmul right operand: %w", err)
	}
	batch, _ := numElements(acc.Shape[:nd-2])
	if m == 0 || n == 0 || batch == 0 {
		return nil
	}
	if k == 0 {
		if first {
			clear(c)
		}
		return nil
	}
	// The operands as stored, and how gemm reads them.
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac, br, bc := m, k, k, n
	if transA {
		ta, ar, ac = blas.Trans, k, m
	}
	if transB {
		tb, br, bc = blas.Trans, n, k
	}
	var mm func(c, a, b []byte)
	switch dt {
	case zarr.Float32:
		mm = func(c, a, b []byte) {
			if symmetric(transA, transB, m, n, a, b) && (first || isSymmetric(as[float32](c), n)) {
				syrk(blas32.Implementation().Ssyrk, m, k, as[float32](a), as[float32](c), first)
				return
			}
			if !useSystemBLAS.Load() && gemm(gemmKernels32, &gemmPack32, m, k, n, as[float32](a), as[float32](b), as[float32](c), transA, transB, first) {
				return
			}
			blas32.Gemm(ta, tb, 1,
				blas32.General{Rows: ar, Cols: ac, Stride: ac, Data: as[float32](a)},
				blas32.General{Rows: br, Cols: bc, Stride: bc, Data: as[float32](b)},
				beta[float32](first), blas32.General{Rows: m, Cols: n, Stride: n, Data: as[float32](c)})
		}
	case zarr.Float64:
		mm = func(c, a, b []byte) {
			if symmetric(transA, transB, m, n, a, b) && (first || isSymmetric(as[float64](c), n)) {
				syrk(blas64.Implementation().Dsyrk, m, k, as[float64](a), as[float64](c), first)
				return
			}
			if !useSystemBLAS.Load() && gemm(gemmKernels64, &gemmPack64, m, k, n, as[float64](a), as[float64](b), as[float64](c), transA, transB, first) {
				return
			}
			blas64.Gemm(ta, tb, 1,
				blas64.General{Rows: ar, Cols: ac, Stride: ac, Data: as[float64](a)},
				blas64.General{Rows: br, Cols: bc, Stride: bc, Data: as[float64](b)},
				beta[float64](first), blas64.General{Rows: m, Cols: n, Stride: n, Data: as[float64](c)})
		}
	case zarr.Complex64:
		mm = func(c, a, b []byte) {
			cblas64.Gemm(ta, tb, 1,
				cblas64.General{Rows: ar, Cols: ac, Stride: ac, Data: as[complex64](a)},
				cblas64.General{Rows: br, Cols: bc, Stride: bc, Data: as[complex64](b)},
				beta[complex64](first), cblas64.General{Rows: m, Cols: n, Stride: n, Data: as[complex64](c)})
		}
	case zarr.Complex128:
		mm = func(c, a, b []byte) {
			cblas128.Gemm(ta, tb, 1,
				cblas128.General{Rows: ar, Cols: ac, Stride: ac, Data: as[complex128](a)},
				cblas128.General{Rows: br, Cols: bc, Stride: bc, Data: as[complex128](b)},
				beta[complex128](first), cblas128.General{Rows: m, Cols: n, Stride: n, Data: as[complex128](c)})
		}
	case zarr.Int8:
		mm = intMatmul[int8](m, k, n, first)
	case zarr.Int16:
		mm = intMatmul[int16](m, k, n, first)
	case zarr.Int32:
		mm = intMatmul[int32](m, k, n, first)
	case zarr.Int64:
		mm = intMatmul[int64](m, k, n, first)
	case zarr.Uint8:
		mm = intMatmul[uint8](m, k, n, first)
	case zarr.Uint16:
		mm = intMatmul[uint16](m, k, n, first)
	case zarr.Uint32:
		mm = intMatmul[uint32](m, k, n, first)
	case zarr.Uint64:
		mm = intMatmul[uint64](m, k, n, first)
	case zarr.Bool:
		mm = func(c, a, b []byte) { boolMatmul(c, a, b, m, k, n, first) }
	default:
		return unsupported("matmul", dt)
	}
	size := dt.Size()
	aLen, bLen, cLen := m*k*size, k*n*size, m*n*size
	for i := range batch {
		mm(c[i*cLen:(i+1)*cLen], ad[i*aLen:(i+1)*aLen], bd[i*bLen:(i+1)*bLen])
	}
	return nil
}

// symmetric reports whether a·bᵀ is a·aᵀ (b transposed and holding the
// same values as a, as on the diagonal blocks of x @ x.T), which syrk
// computes with half the multiplications. Only with a library BLAS: gonum's
// pure-Go Dsyrk is slower than gemm.go. Comparing the operands costs one
// pass over them, against k passes for the product; blocks that differ
// usually do so in their first bytes.
func symmetric(transA, transB bool, m, n int, a, b []byte) bool {
	return useSystemBLAS.Load() && !transA && transB && m == n && m > 1 && bytes.Equal(a, b)
}

// isSymmetric reports whether the n×n matrix c equals its transpose, as
// an accumulator of symmetric products does: syrk may then add to it.
func isSymmetric[T float32 | float64](c []T, n int) bool {
	for i := range n {
		for j := i + 1; j < n; j++ {
			if c[i*n+j] != c[j*n+i] {
				return false
			}
		}
	}
	return true
}

// syrk sets (first) or adds to c (n×n) a·aᵀ for a (n×k): the upper
// triangle from the BLAS, then mirrored to the lower one, so c must be
// symmetric when it is added to.
func syrk[T float32 | float64](f func(blas.Uplo, blas.Transpose, int, int, T, []T, int, T, []T, int), n, k int, a, c []T, first bool) {
	f(blas.Upper, blas.NoTrans, n, k, 1, a, k, beta[T](first), c, n)
	for i := 1; i < n; i++ {
		row := c[i*n : i*n+i]
		for j := range row {
			row[j] = c[j*n+i]
		}
	}
}

// beta is Gemm's beta: 0 overwrites acc (without reading it), 1 adds to it.
func beta[T float | complexFloat](first bool) T {
	if first {
		return 0
	}
	return 1
}

// intMatmul multiplies one (m, k) by one (k, n) integer matrix in i-p-j
// order, so the inner loop runs along contiguous rows of b and c.
func intMatmul[T integer](m, k, n int, first bool) func(c, a, b []byte) {
	return func(cb, ab, bb []byte) {
		c, a, b := as[T](cb), as[T](ab), as[T](bb)
		for i := range m {
			crow := c[i*n : (i+1)*n]
			if first {
				clear(crow)
			}
			for p, av := range a[i*k : (i+1)*k] {
				if av == 0 {
					continue
				}
				// Meaning: for j := range crow { crow[j] += av * b[p*n+j] }.
				brow := b[p*n : (p+1)*n]
				brow = brow[:len(crow)]
				for j := range crow {
					crow[j] += av * brow[j]
				}
			}
		}
	}
}

// boolMatmul is c[i,j] = OR_p (a[i,p] AND b[p,j]).
func boolMatmul(c, a, b []byte, m, k, n int, first bool) {
	for i := range m {
		crow := c[i*n : (i+1)*n]
		if first {
			clear(crow)
		}
		for p, av := range a[i*k : (i+1)*k] {
			if av == 0 {
				continue
			}
			brow := b[p*n : (p+1)*n]
			brow = brow[:len(crow)]
			for j := range crow {
				crow[j] |= b2u(brow[j] != 0)
			}
		}
	}
}
