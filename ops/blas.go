package ops

import "github.com/cubego/cubego/ops/internal/kernels"

// BLASInfo says which BLAS the matrix products and linear algebra use: Name
// is "go" (built-in kernels), "OpenBLAS (linked)" (the openblas build tag)
// or "OpenBLAS (...)" for a library opened at run time, from Path; Error is
// why the last attempt to open one failed, if it did.
type BLASInfo = kernels.BLASInfo

// UseBLASLibrary opens a shared OpenBLAS at run time (scipy-openblas64's
// libscipy_openblas64_.so, scipy-openblas32's, or a system
// libopenblas.so.0) and sends matrix products and LAPACK's level-3 BLAS
// to it, single-threaded, since the engine already runs one task per
// worker. On failure nothing changes and the error says why. Setting
// CUBEGO_BLAS to a path before the program starts does the same; call this
// before computing. Needs cgo.
func UseBLASLibrary(path string) error { return kernels.UseBLASLibrary(path) }

// CurrentBLAS reports the BLAS in use.
func CurrentBLAS() BLASInfo { return kernels.CurrentBLAS() }
