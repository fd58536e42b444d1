package kernels

import (
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// BLASInfo says which BLAS the matrix products and gonum's LAPACK use.
type BLASInfo struct {
	// Name is "go" (the SIMD gemm in gemm.go for float32 and float64, gonum's
	// pure-Go BLAS for the rest), "OpenBLAS (linked)" with the openblas build
	// tag, or "OpenBLAS (<symbol pattern>)" for a library opened at run time.
	Name string
	// Path is the library opened at run time ("" otherwise).
	Path string
	// Error is why the last UseBLASLibrary or $CUBEGO_BLAS failed ("" if it
	// did not); the BLAS in use is then the one before the call.
	Error string
}

var (
	// useSystemBLAS sends every float32/float64 product to gonum's BLAS
	// interface, which then calls OpenBLAS (the openblas build tag or a
	// library opened at run time) instead of gemm.go.
	useSystemBLAS atomic.Bool
	blasInUse     = BLASInfo{Name: "go"}
	blasLoadMu    sync.Mutex // guards blasInUse and the switch of BLAS
)

// CurrentBLAS reports the BLAS in use.
func CurrentBLAS() BLASInfo {
	blasLoadMu.Lock()
	defer blasLoadMu.Unlock()
	return blasInUse
}

// UseBLASLibrary opens the shared OpenBLAS at path and routes matrix
// products and gonum's LAPACK to it, single-threaded (blas_dl.go). On
// failure the BLAS in use stays as it was and the error is returned (and
// kept in CurrentBLAS().Error). Call it before computing: products already
// running finish with the BLAS they started with.
func UseBLASLibrary(path string) error {
	if path == "" {
		return errors.New("kernels: UseBLASLibrary: empty path")
	}
	err := useBLASLibrary(path)
	blasLoadMu.Lock()
	defer blasLoadMu.Unlock()
	if err != nil {
		blasInUse.Error = err.Error()
	} else {
		blasInUse.Error = ""
	}
	return err
}

// BLASEnv names the environment variable read when the package loads: a
// path to a shared OpenBLAS to use (as UseBLASLibrary), or "go" to keep the
// built-in kernels (the Python package then does not load scipy-openblas64
// either).
const BLASEnv = "CUBEGO_BLAS"

func init() {
	v := strings.TrimSpace(os.Getenv(BLASEnv))
	if v == "" || strings.EqualFold(v, "go") {
		return
	}
	_ = UseBLASLibrary(v) // a failure is kept in CurrentBLAS().Error
}

// MatmulWorkspace is the memory a float or complex matrix product uses
// beyond its operands and result: the packing buffers of the BLAS (OpenBLAS
// touches about 4.5 MB of its per-call buffer for a float64 product of
// 2048-square blocks, measured with ru_maxrss; gemm.go's pooled buffers
// are 2.3 MB), with room for the complex kernels' wider panels. Small
// blocks need less: ops counts at most twice the operands' size.
const MatmulWorkspace = 8 << 20
