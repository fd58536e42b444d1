//go:build cgo

package kernels

// A BLAS library opened at run time. UseBLASLibrary dlopens a shared
// OpenBLAS, looks up its CBLAS level-3 routines and routes gonum's BLAS
// interface (blas64, blas32, cblas128, cblas64) to them: every matrix
// product (Matmul) and the level-3 calls inside gonum's LAPACK (qr, svd,
// eigh, solve, ...). The Python package passes the copy of OpenBLAS in the
// scipy-openblas64 wheel when it loads the library; Go programs call
// UseBLASLibrary or set CUBEGO_BLAS (blas_env.go). Four symbol families are
// recognised, so the same call takes scipy-openblas64 (ILP64, prefixed),
// scipy-openblas32 (LP64, prefixed) and a system libopenblas.so.0 (LP64) or
// libopenblas64_.so.0 (ILP64).

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *cg_dlopen(const char *path, char **err) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		*err = (char *)(e ? e : "dlopen failed");
	}
	return h;
}

// cg_one_thread_env sets OPENBLAS_NUM_THREADS=1 in the environment and
// returns a copy of its earlier value (NULL: unset), for cg_restore_env.
static char *cg_one_thread_env(void) {
	const char *was = getenv("OPENBLAS_NUM_THREADS");
	char *saved = was ? strdup(was) : NULL;
	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	return saved;
}

static void cg_restore_env(char *saved) {
	if (saved) {
		setenv("OPENBLAS_NUM_THREADS", saved, 1);
		free(saved);
	} else {
		unsetenv("OPENBLAS_NUM_THREADS");
	}
}

static void *cg_dlsym(void *h, const char *name) { return dlsym(h, name); }

static void cg_set_threads(void *f, int ilp, int n) {
	if (ilp) ((void (*)(int64_t))f)(n);
	else ((void (*)(int32_t))f)(n);
}

// One trampoline per routine: ilp selects 64-bit or 32-bit integer
// arguments (blasint); the enums are C ints in both.
#define GEMM(NAME, T, S) \
static void NAME(void *f, int ilp, int ta, int tb, int64_t m, int64_t n, int64_t k, S alpha, \
	const T *a, int64_t lda, const T *b, int64_t ldb, S beta, T *c, int64_t ldc) { \
	if (ilp) ((void (*)(int, int, int, int64_t, int64_t, int64_t, S, const T *, int64_t, const T *, int64_t, S, T *, int64_t))f) \
		(101, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); \
	else ((void (*)(int, int, int, int32_t, int32_t, int32_t, S, const T *, int32_t, const T *, int32_t, S, T *, int32_t))f) \
		(101, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); \
}
GEMM(cg_dgemm, double, double)
GEMM(cg_sgemm, float, float)
GEMM(cg_zgemm, void, const void *)
GEMM(cg_cgemm, void, const void *)

#define SYRK(NAME, T) \
static void NAME(void *f, int ilp, int ul, int ta, int64_t n, int64_t k, T alpha, \
	const T *a, int64_t lda, T beta, T *c, int64_t ldc) { \
	if (ilp) ((void (*)(int, int, int, int64_t, int64_t, T, const T *, int64_t, T, T *, int64_t))f) \
		(101, ul, ta, n, k, alpha, a, lda, beta, c, ldc); \
	else ((void (*)(int, int, int, int32_t, int32_t, T, const T *, int32_t, T, T *, int32_t))f) \
		(101, ul, ta, n, k, alpha, a, lda, beta, c, ldc); \
}
SYRK(cg_dsyrk, double)
SYRK(cg_ssyrk, float)

// trsm and trmm share a signature.
#define TRXM(NAME, T) \
static void NAME(void *f, int ilp, int side, int ul, int ta, int diag, int64_t m, int64_t n, T alpha, \
	const T *a, int64_t lda, T *b, int64_t ldb) { \
	if (ilp) ((void (*)(int, int, int, int, int, int64_t, int64_t, T, const T *, int64_t, T *, int64_t))f) \
		(101, side, ul, ta, diag, m, n, alpha, a, lda, b, ldb); \
	else ((void (*)(int, int, int, int, int, int32_t, int32_t, T, const T *, int32_t, T *, int32_t))f) \
		(101, side, ul, ta, diag, m, n, alpha, a, lda, b, ldb); \
}
TRXM(cg_dtrxm, double)
TRXM(cg_strxm, float)
*/
import "C"

import (
	"fmt"

	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/blas/cblas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// blasSymbols are the symbol families tried in order: prefix, suffix,
// whether integers are 64-bit, and the thread-count setter.
var blasSymbols = []struct {
	prefix, suffix string
	ilp64          bool
	threads        string
}{
	{"scipy_cblas_", "64_", true, "scipy_openblas_set_num_threads64_"},
	{"scipy_cblas_", "", false, "scipy_openblas_set_num_threads"},
	{"cblas_", "64_", true, "openblas_set_num_threads64_"},
	{"cblas_", "", false, "openblas_set_num_threads"},
}

// useBLASLibrary opens path and, when it has every routine dlBLAS needs,
// routes gonum's BLAS to it. A library that cannot be opened or lacks a
// routine leaves the BLAS in use unchanged.
func useBLASLibrary(path string) error {
	impl, name, err := openBLAS(path)
	if err != nil {
		return err
	}
	blasLoadMu.Lock()
	defer blasLoadMu.Unlock()
	blas64.Use(impl)
	blas32.Use(impl)
	cblas128.Use(impl)
	cblas64.Use(impl)
	useSystemBLAS.Store(true)
	blasInUse = BLASInfo{Name: name, Path: path}
	return nil
}

// openBLAS opens path, looks up the routines of dlBLAS under the first
// symbol family it has, and sets the library to one thread. The handle is
// never closed: the routines may be in use for the life of the process.
func openBLAS(path string) (*dlBLAS, string, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	// OpenBLAS reads OPENBLAS_NUM_THREADS as it loads: with 1 it starts
	// no threads. Otherwise it starts one per core, which spin for some
	// 0.1 s before they sleep, beside the engine's workers. The variable
	// is as it was again once the library is set up. (The Python package
	// loads scipy-openblas64 the same way: importing it loads it.)
	defer C.cg_restore_env(C.cg_one_thread_env())
	var cerr *C.char
	h := C.cg_dlopen(cpath, &cerr)
	if h == nil {
		return nil, "", fmt.Errorf("kernels: cannot open BLAS library %s: %s", path, C.GoString(cerr))
	}
	sym := func(name string) unsafe.Pointer {
		cname := C.CString(name)
		defer C.free(unsafe.Pointer(cname))
		return C.cg_dlsym(h, cname)
	}
	for _, fam := range blasSymbols {
		impl := &dlBLAS{}
		if fam.ilp64 {
			impl.ilp = 1
		}
		ptrs := []*unsafe.Pointer{&impl.dgemm, &impl.sgemm, &impl.zgemm, &impl.cgemm,
			&impl.dsyrk, &impl.ssyrk, &impl.dtrsm, &impl.strsm, &impl.dtrmm, &impl.strmm}
		names := []string{"dgemm", "sgemm", "zgemm", "cgemm", "dsyrk", "ssyrk", "dtrsm", "strsm", "dtrmm", "strmm"}
		ok := true
		for i, name := range names {
			if *ptrs[i] = sym(fam.prefix + name + fam.suffix); *ptrs[i] == nil {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		// The engine runs one task per worker; a threaded BLAS inside each
		// would oversubscribe the cores. This copy of the library is this
		// package's own (numpy's bundled copy is another file), so its
		// thread count is nobody else's.
		if f := sym(fam.threads); f != nil {
			C.cg_set_threads(f, impl.ilp, 1)
		}
		return impl, "OpenBLAS (" + fam.prefix + "*" + fam.suffix + ")", nil
	}
	return nil, "", fmt.Errorf("kernels: %s has no CBLAS level-3 routines under a known name (looked for scipy_cblas_dgemm64_, scipy_cblas_dgemm, cblas_dgemm64_, cblas_dgemm)", path)
}

// dlBLAS is gonum's pure-Go BLAS with its level-3 products replaced by the
// library's. Degenerate sizes go to gonum, which also checks them; the rest
// are checked here (as gonum would, with its panics) before C sees them,
// because OpenBLAS reports a bad argument on stderr and returns.
type dlBLAS struct {
	gonum.Implementation
	ilp                                      C.int
	dgemm, sgemm, zgemm, cgemm               unsafe.Pointer
	dsyrk, ssyrk, dtrsm, strsm, dtrmm, strmm unsafe.Pointer
}

func cTrans(t blas.Transpose) C.int {
	switch t {
	case blas.NoTrans:
		return 111
	case blas.Trans:
		return 112
	case blas.ConjTrans:
		return 113
	}
	panic("blas: illegal transpose")
}

func cUplo(u blas.Uplo) C.int {
	switch u {
	case blas.Upper:
		return 121
	case blas.Lower:
		return 122
	}
	panic("blas: illegal uplo")
}

func cDiag(d blas.Diag) C.int {
	switch d {
	case blas.NonUnit:
		return 131
	case blas.Unit:
		return 132
	}
	panic("blas: illegal diag")
}

func cSide(s blas.Side) C.int {
	switch s {
	case blas.Left:
		return 141
	case blas.Right:
		return 142
	}
	panic("blas: illegal side")
}

// checkMat panics unless a row-major rows×cols matrix with leading
// dimension ld fits in n elements.
func checkMat(which string, rows, cols, ld, n int) {
	if ld < max(1, cols) {
		panic("blas: bad leading dimension of " + which)
	}
	if rows > 0 && cols > 0 && n < (rows-1)*ld+cols {
		panic("blas: insufficient length of " + which)
	}
}

// stored returns the rows and columns of an operand as stored, given its
// rows and columns as used and whether it is transposed.
func stored(t blas.Transpose, r, c int) (int, int) {
	if t == blas.NoTrans {
		return r, c
	}
	return c, r
}

func gemmArgs(tA, tB blas.Transpose, m, n, k, la, lda, lb, ldb, lc, ldc int) (C.int, C.int) {
	ta, tb := cTrans(tA), cTrans(tB)
	r, c := stored(tA, m, k)
	checkMat("a", r, c, lda, la)
	r, c = stored(tB, k, n)
	checkMat("b", r, c, ldb, lb)
	checkMat("c", m, n, ldc, lc)
	return ta, tb
}

func (d *dlBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m <= 0 || n <= 0 || k <= 0 {
		d.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ta, tb := gemmArgs(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	C.cg_dgemm(d.dgemm, d.ilp, ta, tb, C.int64_t(m), C.int64_t(n), C.int64_t(k), C.double(alpha),
		(*C.double)(&a[0]), C.int64_t(lda), (*C.double)(&b[0]), C.int64_t(ldb), C.double(beta), (*C.double)(&c[0]), C.int64_t(ldc))
}

func (d *dlBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m <= 0 || n <= 0 || k <= 0 {
		d.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ta, tb := gemmArgs(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	C.cg_sgemm(d.sgemm, d.ilp, ta, tb, C.int64_t(m), C.int64_t(n), C.int64_t(k), C.float(alpha),
		(*C.float)(&a[0]), C.int64_t(lda), (*C.float)(&b[0]), C.int64_t(ldb), C.float(beta), (*C.float)(&c[0]), C.int64_t(ldc))
}

func (d *dlBLAS) Zgemm(tA, tB blas.Transpose, m, n, k int, alpha complex128, a []complex128, lda int, b []complex128, ldb int, beta complex128, c []complex128, ldc int) {
	if m <= 0 || n <= 0 || k <= 0 {
		d.Implementation.Zgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ta, tb := gemmArgs(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	// alpha and beta go by pointer.
	s := [2]complex128{alpha, beta}
	C.cg_zgemm(d.zgemm, d.ilp, ta, tb, C.int64_t(m), C.int64_t(n), C.int64_t(k), unsafe.Pointer(&s[0]),
		unsafe.Pointer(&a[0]), C.int64_t(lda), unsafe.Pointer(&b[0]), C.int64_t(ldb), unsafe.Pointer(&s[1]), unsafe.Pointer(&c[0]), C.int64_t(ldc))
}

func (d *dlBLAS) Cgemm(tA, tB blas.Transpose, m, n, k int, alpha complex64, a []complex64, lda int, b []complex64, ldb int, beta complex64, c []complex64, ldc int) {
	if m <= 0 || n <= 0 || k <= 0 {
		d.Implementation.Cgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ta, tb := gemmArgs(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	s := [2]complex64{alpha, beta}
	C.cg_cgemm(d.cgemm, d.ilp, ta, tb, C.int64_t(m), C.int64_t(n), C.int64_t(k), unsafe.Pointer(&s[0]),
		unsafe.Pointer(&a[0]), C.int64_t(lda), unsafe.Pointer(&b[0]), C.int64_t(ldb), unsafe.Pointer(&s[1]), unsafe.Pointer(&c[0]), C.int64_t(ldc))
}

func syrkArgs(ul blas.Uplo, tA blas.Transpose, n, k, la, lda, lc, ldc int) (C.int, C.int) {
	u, ta := cUplo(ul), cTrans(tA)
	if tA == blas.ConjTrans {
		panic("blas: illegal transpose")
	}
	r, c := stored(tA, n, k)
	checkMat("a", r, c, lda, la)
	checkMat("c", n, n, ldc, lc)
	return u, ta
}

func (d *dlBLAS) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if n <= 0 || k <= 0 {
		d.Implementation.Dsyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	u, ta := syrkArgs(ul, tA, n, k, len(a), lda, len(c), ldc)
	C.cg_dsyrk(d.dsyrk, d.ilp, u, ta, C.int64_t(n), C.int64_t(k), C.double(alpha),
		(*C.double)(&a[0]), C.int64_t(lda), C.double(beta), (*C.double)(&c[0]), C.int64_t(ldc))
}

func (d *dlBLAS) Ssyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	if n <= 0 || k <= 0 {
		d.Implementation.Ssyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	u, ta := syrkArgs(ul, tA, n, k, len(a), lda, len(c), ldc)
	C.cg_ssyrk(d.ssyrk, d.ilp, u, ta, C.int64_t(n), C.int64_t(k), C.float(alpha),
		(*C.float)(&a[0]), C.int64_t(lda), C.float(beta), (*C.float)(&c[0]), C.int64_t(ldc))
}

func trxmArgs(s blas.Side, ul blas.Uplo, tA blas.Transpose, dg blas.Diag, m, n, la, lda, lb, ldb int) (C.int, C.int, C.int, C.int) {
	cs, u, ta, cd := cSide(s), cUplo(ul), cTrans(tA), cDiag(dg)
	k := n
	if s == blas.Left {
		k = m
	}
	checkMat("a", k, k, lda, la)
	checkMat("b", m, n, ldb, lb)
	return cs, u, ta, cd
}

func (d *dlBLAS) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, dg blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if m <= 0 || n <= 0 {
		d.Implementation.Dtrsm(s, ul, tA, dg, m, n, alpha, a, lda, b, ldb)
		return
	}
	cs, u, ta, cd := trxmArgs(s, ul, tA, dg, m, n, len(a), lda, len(b), ldb)
	C.cg_dtrxm(d.dtrsm, d.ilp, cs, u, ta, cd, C.int64_t(m), C.int64_t(n), C.double(alpha),
		(*C.double)(&a[0]), C.int64_t(lda), (*C.double)(&b[0]), C.int64_t(ldb))
}

func (d *dlBLAS) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, dg blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if m <= 0 || n <= 0 {
		d.Implementation.Dtrmm(s, ul, tA, dg, m, n, alpha, a, lda, b, ldb)
		return
	}
	cs, u, ta, cd := trxmArgs(s, ul, tA, dg, m, n, len(a), lda, len(b), ldb)
	C.cg_dtrxm(d.dtrmm, d.ilp, cs, u, ta, cd, C.int64_t(m), C.int64_t(n), C.double(alpha),
		(*C.double)(&a[0]), C.int64_t(lda), (*C.double)(&b[0]), C.int64_t(ldb))
}

func (d *dlBLAS) Strsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, dg blas.Diag, m, n int, alpha float32, a []float32, lda int, b []float32, ldb int) {
	if m <= 0 || n <= 0 {
		d.Implementation.Strsm(s, ul, tA, dg, m, n, alpha, a, lda, b, ldb)
		return
	}
	cs, u, ta, cd := trxmArgs(s, ul, tA, dg, m, n, len(a), lda, len(b), ldb)
	C.cg_strxm(d.strsm, d.ilp, cs, u, ta, cd, C.int64_t(m), C.int64_t(n), C.float(alpha),
		(*C.float)(&a[0]), C.int64_t(lda), (*C.float)(&b[0]), C.int64_t(ldb))
}

func (d *dlBLAS) Strmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, dg blas.Diag, m, n int, alpha float32, a []float32, lda int, b []float32, ldb int) {
	if m <= 0 || n <= 0 {
		d.Implementation.Strmm(s, ul, tA, dg, m, n, alpha, a, lda, b, ldb)
		return
	}
	cs, u, ta, cd := trxmArgs(s, ul, tA, dg, m, n, len(a), lda, len(b), ldb)
	C.cg_strxm(d.strmm, d.ilp, cs, u, ta, cd, C.int64_t(m), C.int64_t(n), C.float(alpha),
		(*C.float)(&a[0]), C.int64_t(lda), (*C.float)(&b[0]), C.int64_t(ldb))
}
