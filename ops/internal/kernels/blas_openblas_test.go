//go:build openblas

package kernels

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/netlib/blas/netlib"

	"github.com/cubego/cubego/zarr"
)

// TestOpenBLASInUse checks that the openblas build routes gonum's BLAS to
// OpenBLAS and that Matmul then still computes the plain product.
func TestOpenBLASInUse(t *testing.T) {
	if _, ok := blas64.Implementation().(netlib.Implementation); !ok {
		t.Fatalf("blas64 uses %T, not OpenBLAS", blas64.Implementation())
	}
	if _, ok := cblas128.Implementation().(netlib.Implementation); !ok {
		t.Fatalf("cblas128 uses %T, not OpenBLAS", cblas128.Implementation())
	}
	const m, k, n = 3, 4, 5
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		a[i] = float64(i) - 5
	}
	for i := range b {
		b[i] = float64(i%7) * 0.5
	}
	c := make([]float64, m*n)
	acc := Contiguous(zarr.Float64, bytesOfSlice(c), []int{m, n})
	if err := Matmul(acc, Contiguous(zarr.Float64, bytesOfSlice(a), []int{m, k}), Contiguous(zarr.Float64, bytesOfSlice(b), []int{k, n}), true); err != nil {
		t.Fatal(err)
	}
	for i := range m {
		for j := range n {
			var want float64
			for p := range k {
				want += a[i*k+p] * b[p*n+j]
			}
			if c[i*n+j] != want {
				t.Fatalf("c[%d,%d] = %v, want %v", i, j, c[i*n+j], want)
			}
		}
	}
}
