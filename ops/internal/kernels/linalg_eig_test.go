package kernels

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// eigRun runs eig_values and eig_vectors on one matrix given as complex
// values, stored as dt (real dtypes take the real parts).
func eigRun(t *testing.T, dt zarr.DataType, a cmat) (w []complex128, v cmat) {
	t.Helper()
	n := a.r
	in := Contiguous(dt, make([]byte, n*n*dt.Size()), []int{1, n, n})
	isComplex := dt == zarr.Complex64 || dt == zarr.Complex128
	if isComplex {
		writeComplex128(in, 0, a.d)
	} else {
		re := make([]float64, n*n)
		for i, e := range a.d {
			re[i] = real(e)
		}
		writeFloat64(in, 0, re)
	}
	outDT := zarr.Complex128
	if dt == zarr.Float32 || dt == zarr.Complex64 {
		outDT = zarr.Complex64
	}
	wo := Contiguous(outDT, make([]byte, n*outDT.Size()), []int{1, n})
	vo := Contiguous(outDT, make([]byte, n*n*outDT.Size()), []int{1, n, n})
	if err := Linalg("eig_values", wo, []Operand{in}); err != nil {
		t.Fatal(err)
	}
	if err := Linalg("eig_vectors", vo, []Operand{in}); err != nil {
		t.Fatal(err)
	}
	w = make([]complex128, n)
	readComplex128(w, wo, 0)
	v = cmat{n, n, make([]complex128, n*n)}
	readComplex128(v.d, vo, 0)
	return w, v
}

// checkEig verifies A·v_k = λ_k·v_k, unit norms and real largest components,
// and that the eigenvalues sum to the trace.
func checkEig(t *testing.T, what string, a cmat, w []complex128, v cmat, tol float64) {
	t.Helper()
	n := a.r
	anorm := 0.0
	var trace, sum complex128
	for i := range n {
		trace += a.at(i, i)
		sum += w[i]
		for j := range n {
			anorm = max(anorm, cmplx.Abs(a.at(i, j)))
		}
	}
	if cmplx.Abs(trace-sum) > tol*float64(n)*(1+anorm) {
		t.Errorf("%s: eigenvalues sum to %v, trace %v", what, sum, trace)
	}
	av := a.mul(v)
	for k := range n {
		norm, big, at := 0.0, -1.0, 0
		for i := range n {
			r := av.at(i, k) - w[k]*v.at(i, k)
			if cmplx.Abs(r) > tol*float64(n)*(1+anorm) {
				t.Errorf("%s: (A - λ%d)·v%d has %v at row %d (λ = %v)", what, k, k, r, i, w[k])
				return
			}
			a := cmplx.Abs(v.at(i, k))
			norm = math.Hypot(norm, a)
			if a > big {
				big, at = a, i
			}
		}
		if math.Abs(norm-1) > tol*10 || imag(v.at(at, k)) != 0 || real(v.at(at, k)) == 0 {
			t.Errorf("%s: v%d has norm %v and largest component %v", what, k, norm, v.at(at, k))
		}
	}
}

func TestLinalgEig(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 5, 8, 17} {
		a := randCmat(rng, n, n)
		for _, dt := range []zarr.DataType{zarr.Complex128, zarr.Float64} {
			b := a
			if dt == zarr.Float64 {
				b = cmat{n, n, make([]complex128, n*n)}
				for i, e := range a.d {
					b.d[i] = complex(real(e), 0)
				}
			}
			w, v := eigRun(t, dt, b)
			checkEig(t, "random "+dt.String(), b, w, v, 1e-12)
		}
		w, v := eigRun(t, zarr.Complex64, a)
		checkEig(t, "random complex64", a, w, v, 1e-5)
	}
	// A rotation (eigenvalues ±i, a conjugate pair from Dgeev), a Jordan
	// block (defective: one eigenvector twice), a triangular matrix, the
	// zero matrix and an upper Hessenberg complex matrix with a large scale.
	special := map[string]cmat{
		"rotation":   {2, 2, []complex128{0, -1, 1, 0}},
		"jordan":     {3, 3, []complex128{2, 1, 0, 0, 2, 1, 0, 0, 2}},
		"triangular": {3, 3, []complex128{1, 2i, 3, 0, -1i, 4, 0, 0, 5 + 5i}},
		"zero":       {2, 2, []complex128{0, 0, 0, 0}},
		"huge":       {2, 2, []complex128{1e300, 2e300i, -3e300, 1e299}},
	}
	for name, a := range special {
		w, v := eigRun(t, zarr.Complex128, a)
		tol := 1e-12
		if name == "jordan" {
			tol = 1e-5 // a defective eigenvalue is only accurate to √eps
		}
		checkEig(t, name, a, w, v, tol)
	}
	w, _ := eigRun(t, zarr.Float64, special["rotation"])
	if cmplx.Abs(w[0]-1i) > 1e-15 || cmplx.Abs(w[1]+1i) > 1e-15 {
		t.Errorf("rotation eigenvalues %v, want [i -i] (LAPACK's order)", w)
	}
	w, _ = eigRun(t, zarr.Complex128, special["triangular"])
	for i, want := range []complex128{1, -1i, 5 + 5i} {
		if cmplx.Abs(w[i]-want) > 1e-14 {
			t.Errorf("triangular eigenvalues %v", w)
		}
	}
	// NaN and inf give NaN results rather than an error.
	for _, dt := range []zarr.DataType{zarr.Float64, zarr.Complex128} {
		w, v := eigRun(t, dt, cmat{2, 2, []complex128{1, complex(math.NaN(), 0), 0, 1}})
		if !cmplx.IsNaN(w[0]) || !cmplx.IsNaN(v.d[3]) {
			t.Errorf("eig(%s) with NaN = %v, %v", dt, w, v.d)
		}
	}
}
