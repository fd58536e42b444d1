//go:build openblas

package kernels

// With the openblas build tag (make lib TAGS=openblas), gonum's BLAS calls
// go to OpenBLAS through gonum/netlib's cgo bindings: every float32,
// float64, complex64 and complex128 matrix product (Matmul), and the level-3
// BLAS inside gonum's LAPACK routines (qr, svd, eigh, eig, ...). OpenBLAS
// runs single-threaded: the engine already runs one task per worker, and a
// threaded BLAS inside each would oversubscribe the cores. The library then
// needs libopenblas at run time (Debian/Ubuntu: libopenblas-dev to build,
// libopenblas0 to run).

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int num_threads);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/blas/cblas64"
	"gonum.org/v1/netlib/blas/netlib"
)

func init() {
	C.openblas_set_num_threads(1)
	impl := netlib.Implementation{}
	blas64.Use(impl)
	blas32.Use(impl)
	cblas128.Use(impl)
	cblas64.Use(impl)
	useSystemBLAS.Store(true)
	blasInUse = BLASInfo{Name: "OpenBLAS (linked)"}
}
