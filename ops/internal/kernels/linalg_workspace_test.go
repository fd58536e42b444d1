package kernels

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/cubego/cubego/zarr"
)

// The projected scratch memory of qr and svd covers what the kernels
// allocate: the float64 matrix and result, and the work arrays LAPACK asks
// for in its workspace queries, over tall, wide, square and tiny shapes.
func TestLinalgWorkspaceCoversLAPACK(t *testing.T) {
	shapes := [][2]int{{1, 1}, {2, 2}, {8, 2}, {2, 8}, {3, 5}, {64, 2}, {100, 37}, {37, 100}, {300, 300}, {1000, 5}, {5, 1000}}
	for _, s := range shapes {
		m, n := s[0], s[1]
		r := min(m, n)
		for _, fn := range []string{"qr_q", "qr_r", "qr_complete_q", "qr_complete_r"} {
			core, _ := LinalgCoreShape(fn, m, n, 0)
			out := core[0] * core[1]
			work := []float64{0}
			a := blas64.General{Rows: m, Cols: n, Stride: n, Data: make([]float64, m*n)}
			lapack64.Geqrf(a, make([]float64, r), work, -1)
			geqrf := max(int(work[0]), n, 1)
			cols := r
			if fn == "qr_complete_q" {
				cols = m
			}
			q := blas64.General{Rows: m, Cols: cols, Stride: cols, Data: make([]float64, m*cols)}
			lapack64.Orgqr(q, make([]float64, r), work, -1)
			orgqr := max(int(work[0]), cols, 1)
			need := int64(8 * (m*n + out + r + geqrf + orgqr))
			if got := LinalgWorkspace(fn, zarr.Float64, m, n, 0); got < need {
				t.Errorf("%s of %d×%d: workspace %d < %d", fn, m, n, got, need)
			}
		}
		for _, fn := range []string{"svd_u", "svd_s", "svd_vh", "svd_full_u", "svd_full_vh"} {
			core, _ := LinalgCoreShape(fn, m, n, 0)
			out := 1
			for _, c := range core {
				out *= c
			}
			jobU, jobVT := lapack.SVDNone, lapack.SVDNone
			u := blas64.General{Stride: 1, Data: []float64{0}}
			vt := blas64.General{Stride: 1, Data: []float64{0}}
			switch fn {
			case "svd_u":
				jobU, u = lapack.SVDStore, blas64.General{Rows: m, Cols: r, Stride: r, Data: make([]float64, m*r)}
			case "svd_full_u":
				jobU, u = lapack.SVDAll, blas64.General{Rows: m, Cols: m, Stride: m, Data: make([]float64, m*m)}
			case "svd_vh":
				jobVT, vt = lapack.SVDStore, blas64.General{Rows: r, Cols: n, Stride: n, Data: make([]float64, r*n)}
			case "svd_full_vh":
				jobVT, vt = lapack.SVDAll, blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
			}
			a := blas64.General{Rows: m, Cols: n, Stride: n, Data: make([]float64, m*n)}
			work := []float64{0}
			lapack64.Gesvd(jobU, jobVT, a, u, vt, make([]float64, r), work, -1)
			gesvd := max(int(work[0]), 5*r+max(m, n), 1)
			need := int64(8 * (m*n + out + r + gesvd))
			if got := LinalgWorkspace(fn, zarr.Float64, m, n, 0); got < need {
				t.Errorf("%s of %d×%d: workspace %d < %d", fn, m, n, got, need)
			}
		}
	}
}
