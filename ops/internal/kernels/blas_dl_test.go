//go:build cgo

package kernels

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/cblas128"
	"gonum.org/v1/gonum/blas/cblas64"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/cubego/cubego/zarr"
)

// testBLASPath finds scipy-openblas64's library: $CUBEGO_TEST_BLAS, else
// asks the Python of $CUBEGO_ZARR_PYTHON or python3 on PATH. The test is
// skipped when neither has it.
func testBLASPath(t testing.TB) string {
	if p := os.Getenv("CUBEGO_TEST_BLAS"); p != "" {
		return p
	}
	const script = "import os, scipy_openblas64 as s; print(os.path.join(s.get_lib_dir(), s.get_library(True)))"
	for _, py := range []string{os.Getenv("CUBEGO_ZARR_PYTHON"), "python3"} {
		if py == "" {
			continue
		}
		if out, err := exec.Command(py, "-c", script).Output(); err == nil {
			return strings.TrimSpace(string(out))
		}
	}
	t.Skip("no scipy-openblas64 (pip install scipy-openblas64, or set CUBEGO_TEST_BLAS to a libopenblas)")
	return ""
}

func testDLBLAS(t testing.TB) *dlBLAS {
	impl, name, err := openBLAS(testBLASPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "OpenBLAS") {
		t.Fatalf("name %q", name)
	}
	return impl
}

func randSlice[T float32 | float64](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(r.Float64()*2 - 1)
	}
	return s
}

func randComplex[T complex64 | complex128](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(complex(r.Float64()*2-1, r.Float64()*2-1))
	}
	return s
}

func closeTo(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func widen[T float32 | float64](s []T) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

func widenC[T complex64 | complex128](s []T) []float64 {
	out := make([]float64, 2*len(s))
	for i, v := range s {
		c := complex128(v)
		out[2*i], out[2*i+1] = real(c), imag(c)
	}
	return out
}

var transposes = []blas.Transpose{blas.NoTrans, blas.Trans, blas.ConjTrans}

// TestDLBLASMatchesGonum compares every routine the run-time OpenBLAS
// replaces with gonum's, on odd sizes, every transpose, leading dimensions
// wider than the matrices and alpha, beta other than 0 and 1.
func TestDLBLASMatchesGonum(t *testing.T) {
	d := testDLBLAS(t)
	var g gonum.Implementation
	r := rand.New(rand.NewPCG(41, 42))
	for _, sz := range [][3]int{{1, 1, 1}, {7, 5, 3}, {33, 70, 17}, {64, 1, 129}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tA := range transposes {
			for _, tB := range transposes {
				name := fmt.Sprintf("%dx%dx%d/%c%c", m, n, k, tA, tB)
				ar, ac := stored(tA, m, k)
				br, bc := stored(tB, k, n)
				lda, ldb, ldc := ac+3, bc+1, n+2
				a64, b64, c64 := randSlice[float64](r, ar*lda), randSlice[float64](r, br*ldb), randSlice[float64](r, m*ldc)
				want := append([]float64(nil), c64...)
				g.Dgemm(tA, tB, m, n, k, 0.7, a64, lda, b64, ldb, -1.3, want, ldc)
				d.Dgemm(tA, tB, m, n, k, 0.7, a64, lda, b64, ldb, -1.3, c64, ldc)
				closeTo(t, "Dgemm "+name, c64, want, 1e-12)

				a32, b32, c32 := randSlice[float32](r, ar*lda), randSlice[float32](r, br*ldb), randSlice[float32](r, m*ldc)
				want32 := append([]float32(nil), c32...)
				g.Sgemm(tA, tB, m, n, k, 0.7, a32, lda, b32, ldb, -1.3, want32, ldc)
				d.Sgemm(tA, tB, m, n, k, 0.7, a32, lda, b32, ldb, -1.3, c32, ldc)
				closeTo(t, "Sgemm "+name, widen(c32), widen(want32), 1e-4)

				az, bz, cz := randComplex[complex128](r, ar*lda), randComplex[complex128](r, br*ldb), randComplex[complex128](r, m*ldc)
				wantz := append([]complex128(nil), cz...)
				g.Zgemm(tA, tB, m, n, k, 0.5-0.25i, az, lda, bz, ldb, 1+2i, wantz, ldc)
				d.Zgemm(tA, tB, m, n, k, 0.5-0.25i, az, lda, bz, ldb, 1+2i, cz, ldc)
				closeTo(t, "Zgemm "+name, widenC(cz), widenC(wantz), 1e-12)

				ac64, bc64, cc64 := randComplex[complex64](r, ar*lda), randComplex[complex64](r, br*ldb), randComplex[complex64](r, m*ldc)
				wantc := append([]complex64(nil), cc64...)
				g.Cgemm(tA, tB, m, n, k, 0.5-0.25i, ac64, lda, bc64, ldb, 1+2i, wantc, ldc)
				d.Cgemm(tA, tB, m, n, k, 0.5-0.25i, ac64, lda, bc64, ldb, 1+2i, cc64, ldc)
				closeTo(t, "Cgemm "+name, widenC(cc64), widenC(wantc), 1e-4)
			}
		}
		for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				name := fmt.Sprintf("%dx%d/%c%c", n, k, ul, tA)
				ar, ac := stored(tA, n, k)
				lda, ldc := ac+2, n+1
				a, c := randSlice[float64](r, ar*lda), randSlice[float64](r, n*ldc)
				want := append([]float64(nil), c...)
				g.Dsyrk(ul, tA, n, k, 0.9, a, lda, 0.5, want, ldc)
				d.Dsyrk(ul, tA, n, k, 0.9, a, lda, 0.5, c, ldc)
				closeTo(t, "Dsyrk "+name, c, want, 1e-12)
				a32, c32 := randSlice[float32](r, ar*lda), randSlice[float32](r, n*ldc)
				want32 := append([]float32(nil), c32...)
				g.Ssyrk(ul, tA, n, k, 0.9, a32, lda, 0.5, want32, ldc)
				d.Ssyrk(ul, tA, n, k, 0.9, a32, lda, 0.5, c32, ldc)
				closeTo(t, "Ssyrk "+name, widen(c32), widen(want32), 1e-4)
			}
		}
		for _, s := range []blas.Side{blas.Left, blas.Right} {
			for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
				for _, tA := range transposes {
					for _, dg := range []blas.Diag{blas.NonUnit, blas.Unit} {
						name := fmt.Sprintf("%dx%d/%c%c%c%c", m, n, s, ul, tA, dg)
						ka := n
						if s == blas.Left {
							ka = m
						}
						lda, ldb := ka+1, n+3
						a := randSlice[float64](r, ka*lda)
						// Well conditioned for trsm, with a unit diagonal too.
						for i := range a {
							a[i] /= float64(ka)
						}
						for i := range ka {
							a[i*lda+i] += 4
						}
						b := randSlice[float64](r, m*ldb)
						want := append([]float64(nil), b...)
						g.Dtrsm(s, ul, tA, dg, m, n, 1.5, a, lda, want, ldb)
						d.Dtrsm(s, ul, tA, dg, m, n, 1.5, a, lda, b, ldb)
						closeTo(t, "Dtrsm "+name, b, want, 1e-10)
						want = append(want[:0], b...)
						g.Dtrmm(s, ul, tA, dg, m, n, -0.5, a, lda, want, ldb)
						d.Dtrmm(s, ul, tA, dg, m, n, -0.5, a, lda, b, ldb)
						closeTo(t, "Dtrmm "+name, b, want, 1e-12)

						a32 := randSlice[float32](r, ka*lda)
						for i := range a32 {
							a32[i] /= float32(ka)
						}
						for i := range ka {
							a32[i*lda+i] += 4
						}
						b32 := randSlice[float32](r, m*ldb)
						want32 := append([]float32(nil), b32...)
						g.Strsm(s, ul, tA, dg, m, n, 1.5, a32, lda, want32, ldb)
						d.Strsm(s, ul, tA, dg, m, n, 1.5, a32, lda, b32, ldb)
						closeTo(t, "Strsm "+name, widen(b32), widen(want32), 1e-4)
						want32 = append(want32[:0], b32...)
						g.Strmm(s, ul, tA, dg, m, n, -0.5, a32, lda, want32, ldb)
						d.Strmm(s, ul, tA, dg, m, n, -0.5, a32, lda, b32, ldb)
						closeTo(t, "Strmm "+name, widen(b32), widen(want32), 1e-4)
					}
				}
			}
		}
	}
	// Degenerate sizes go to gonum: k = 0 scales c by beta.
	c := []float64{1, 2, 3, 4}
	d.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 0, 1, make([]float64, 1), 1, nil, 2, 2, c, 2)
	closeTo(t, "Dgemm k=0", c, []float64{2, 4, 6, 8}, 0)
}

// TestDLBLASChecks: arguments OpenBLAS would reject (and then return
// without computing) or that would make it read past a slice panic first.
func TestDLBLASChecks(t *testing.T) {
	d := testDLBLAS(t)
	a, b, c := make([]float64, 6), make([]float64, 6), make([]float64, 4)
	for _, tc := range []struct {
		name, want string
		call       func()
	}{
		{"lda", "leading dimension of a", func() { d.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a, 2, b, 2, 0, c, 2) }},
		{"short b", "length of b", func() { d.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a, 3, b[:5], 2, 0, c, 2) }},
		{"short c", "length of c", func() { d.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a, 3, b, 2, 0, c[:3], 2) }},
		{"transpose", "transpose", func() { d.Dgemm('x', blas.NoTrans, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2) }},
		{"syrk conj", "transpose", func() { d.Dsyrk(blas.Upper, blas.ConjTrans, 2, 3, 1, a, 2, 0, c, 2) }},
		{"trsm uplo", "uplo", func() { d.Dtrsm(blas.Left, 'x', blas.NoTrans, blas.Unit, 2, 2, 1, c, 2, c, 2) }},
		{"trmm short a", "length of a", func() { d.Dtrmm(blas.Left, blas.Upper, blas.NoTrans, blas.Unit, 2, 2, 1, c[:3], 2, c, 2) }},
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), tc.want) {
					t.Errorf("%s: panic %v, want one mentioning %q", tc.name, p, tc.want)
				}
			}()
			tc.call()
		}()
	}
}

// TestUseBLASLibrary installs the run-time OpenBLAS, checks Matmul on
// every float and complex type (sizes larger than one gemm block), then
// restores the built-in kernels; a bad path or a library without CBLAS
// leaves them in place and says why.
func TestUseBLASLibrary(t *testing.T) {
	path := testBLASPath(t)
	before := CurrentBLAS()
	restore := func() {
		blasLoadMu.Lock()
		defer blasLoadMu.Unlock()
		var g gonum.Implementation
		blas64.Use(g)
		blas32.Use(g)
		cblas128.Use(g)
		cblas64.Use(g)
		useSystemBLAS.Store(false)
		blasInUse = before
	}
	defer restore()
	if before.Name != "go" {
		t.Skipf("BLAS already %q ($%s?)", before.Name, BLASEnv)
	}
	if err := UseBLASLibrary("/nonexistent/libopenblas.so"); err == nil || !strings.Contains(err.Error(), "cannot open") {
		t.Fatalf("bad path: %v", err)
	}
	if got := CurrentBLAS(); got.Name != "go" || !strings.Contains(got.Error, "cannot open") {
		t.Fatalf("after a bad path: %+v", got)
	}
	if err := UseBLASLibrary("libm.so.6"); err == nil || !strings.Contains(err.Error(), "no CBLAS") {
		t.Fatalf("library without CBLAS: %v", err)
	}
	if useSystemBLAS.Load() {
		t.Fatal("a failed load switched the BLAS")
	}
	if err := UseBLASLibrary(path); err != nil {
		t.Fatal(err)
	}
	if got := CurrentBLAS(); !strings.HasPrefix(got.Name, "OpenBLAS") || got.Path != path || got.Error != "" {
		t.Fatalf("after loading: %+v", got)
	}
	if _, ok := blas64.Implementation().(*dlBLAS); !ok {
		t.Fatalf("blas64 uses %T", blas64.Implementation())
	}
	checkSymmetricProduct(t)
	r := rand.New(rand.NewPCG(43, 44))
	const m, k, n = 131, 300, 97
	for _, dt := range []zarr.DataType{zarr.Float64, zarr.Float32, zarr.Complex128, zarr.Complex64} {
		for _, first := range []bool{true, false} {
			var a, b, c, want []complex128
			for range m * k {
				a = append(a, complex(r.Float64()-0.5, r.Float64()-0.5))
			}
			for range k * n {
				b = append(b, complex(r.Float64()-0.5, r.Float64()-0.5))
			}
			for range m * n {
				c = append(c, complex(r.Float64()-0.5, r.Float64()-0.5))
			}
			isReal := dt == zarr.Float64 || dt == zarr.Float32
			for _, s := range [][]complex128{a, b, c} {
				for i := range s {
					if isReal {
						s[i] = complex(math.Round(real(s[i])*64)/64, 0)
					}
				}
			}
			want = append(want, c...)
			for i := range m {
				for j := range n {
					var sum complex128
					for p := range k {
						sum += a[i*k+p] * b[p*n+j]
					}
					if first {
						want[i*n+j] = sum
					} else {
						want[i*n+j] += sum
					}
				}
			}
			enc := func(s []complex128) []byte { return encodeComplex(dt, s) }
			cb := enc(c)
			acc := Contiguous(dt, cb, []int{m, n})
			if err := Matmul(acc, Contiguous(dt, enc(a), []int{m, k}), Contiguous(dt, enc(b), []int{k, n}), first); err != nil {
				t.Fatal(err)
			}
			got := decodeComplex(dt, cb)
			tol := 1e-12
			if dt == zarr.Float32 || dt == zarr.Complex64 {
				tol = 1e-4
			}
			for i := range want {
				if cmplx.Abs(got[i]-want[i]) > tol*(1+cmplx.Abs(want[i])) {
					t.Fatalf("%s first=%v: [%d] = %v, want %v", dt, first, i, got[i], want[i])
				}
			}
		}
	}
}

// checkSymmetricProduct: a @ a.T with b holding a's bytes goes to syrk and
// still gives the whole product, set or added; nearly equal operands do not.
func checkSymmetricProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const n, k = 67, 150
	for _, dt := range []zarr.DataType{zarr.Float64, zarr.Float32} {
		for _, first := range []bool{true, false} {
			for _, tc := range []struct{ same, symC bool }{{true, true}, {true, false}, {false, true}} {
				same := tc.same
				a := make([]float64, n*k)
				for i := range a {
					a[i] = math.Round((r.Float64()-0.5)*64) / 64
				}
				bv := append([]float64(nil), a...)
				if !same {
					bv[len(bv)-1] += 0.5
				}
				c := make([]float64, n*n)
				for i := range n {
					for j := range n {
						c[i*n+j] = math.NaN()
						if !first {
							c[i*n+j] = float64((i + j) % 5)
						}
					}
				}
				if !first && !tc.symC {
					c[1] = 7 // not symmetric: syrk cannot add to it, gemm does
				}
				want := append([]float64(nil), c...)
				for i := range n {
					for j := range n {
						var sum float64
						for p := range k {
							sum += a[i*k+p] * bv[j*k+p]
						}
						if first {
							want[i*n+j] = sum
						} else {
							want[i*n+j] += sum
						}
					}
				}
				enc := func(x []float64) []byte {
					if dt == zarr.Float32 {
						return bytesOfSlice(toFloat32(x))
					}
					return bytesOfSlice(append([]float64(nil), x...))
				}
				cb := enc(c)
				ab, bb := enc(a), enc(bv)
				if symmetric(false, true, n, n, ab, bb) != same {
					t.Fatalf("symmetric = %v for same = %v", !same, same)
				}
				if err := MatmulTrans(Contiguous(dt, cb, []int{n, n}), Contiguous(dt, ab, []int{n, k}), Contiguous(dt, bb, []int{n, k}), false, true, first); err != nil {
					t.Fatal(err)
				}
				var got []float64
				if dt == zarr.Float32 {
					got = widen(as[float32](cb))
				} else {
					got = as[float64](cb)
				}
				closeTo(t, fmt.Sprintf("%s syrk first=%v %+v", dt, first, tc), got, want, 1e-6)
			}
		}
	}
}

func encodeComplex(dt zarr.DataType, s []complex128) []byte {
	switch dt {
	case zarr.Float64:
		out := make([]float64, len(s))
		for i, v := range s {
			out[i] = real(v)
		}
		return bytesOfSlice(out)
	case zarr.Float32:
		out := make([]float32, len(s))
		for i, v := range s {
			out[i] = float32(real(v))
		}
		return bytesOfSlice(out)
	case zarr.Complex64:
		out := make([]complex64, len(s))
		for i, v := range s {
			out[i] = complex64(v)
		}
		return bytesOfSlice(out)
	}
	return bytesOfSlice(append([]complex128(nil), s...))
}

func decodeComplex(dt zarr.DataType, b []byte) []complex128 {
	var out []complex128
	switch dt {
	case zarr.Float64:
		for _, v := range as[float64](b) {
			out = append(out, complex(v, 0))
		}
	case zarr.Float32:
		for _, v := range as[float32](b) {
			out = append(out, complex(float64(v), 0))
		}
	case zarr.Complex64:
		for _, v := range as[complex64](b) {
			out = append(out, complex128(v))
		}
	default:
		out = append(out, as[complex128](b)...)
	}
	return out
}

// BenchmarkMatmulBLAS: Matmul per chunk with the built-in gemm and with
// the run-time OpenBLAS, side by side (-run '^$' -bench MatmulBLAS).
func BenchmarkMatmulBLAS(b *testing.B) {
	d := testDLBLAS(b)
	for _, c := range []struct {
		dt zarr.DataType
		n  int
	}{{zarr.Float64, 512}, {zarr.Float64, 2048}, {zarr.Float32, 1024}} {
		for _, lib := range []string{"go", "openblas"} {
			b.Run(fmt.Sprintf("%s/%d/%s", c.dt, c.n, lib), func(b *testing.B) {
				if lib == "openblas" {
					blas64.Use(d)
					blas32.Use(d)
					useSystemBLAS.Store(true)
					defer func() {
						blas64.Use(gonum.Implementation{})
						blas32.Use(gonum.Implementation{})
						useSystemBLAS.Store(false)
					}()
				}
				n := c.n
				x := Contiguous(c.dt, benchData(c.dt, n*n), []int{n, n})
				y := Contiguous(c.dt, benchData(c.dt, n*n), []int{n, n})
				acc := Contiguous(c.dt, make([]byte, n*n*c.dt.Size()), []int{n, n})
				for b.Loop() {
					if err := Matmul(acc, x, y, true); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
	// a @ a.T of one block, as on the diagonal of x @ x.T: gemm with a
	// transposed copy, then syrk (GFLOP/s counts the gemm's 2n³ for both).
	const n = 2048
	blas64.Use(d)
	useSystemBLAS.Store(true)
	defer func() {
		blas64.Use(gonum.Implementation{})
		useSystemBLAS.Store(false)
	}()
	x := Contiguous(zarr.Float64, benchData(zarr.Float64, n*n), []int{n, n})
	acc := Contiguous(zarr.Float64, make([]byte, n*n*8), []int{n, n})
	for _, sym := range []bool{false, true} {
		b.Run(fmt.Sprintf("float64/%d/aat/syrk=%v", n, sym), func(b *testing.B) {
			y := x
			if !sym {
				y = Contiguous(zarr.Float64, append([]byte(nil), x.Data...), x.Shape)
				as[float64](y.Data)[n*n-1]++ // differs in its last element: gemm
			}
			for b.Loop() {
				if err := MatmulTrans(acc, x, y, false, true, true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
