package kernels

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cubego/cubego/zarr"
)

// mat is a row-major float64 matrix for the reference checks.
type mat struct {
	r, c int
	d    []float64
}

func (a mat) at(i, j int) float64 { return a.d[i*a.c+j] }

func (a mat) mul(b mat) mat {
	out := mat{a.r, b.c, make([]float64, a.r*b.c)}
	for i := range a.r {
		for j := range b.c {
			var s float64
			for p := range a.c {
				s += a.at(i, p) * b.at(p, j)
			}
			out.d[i*b.c+j] = s
		}
	}
	return out
}

func (a mat) t() mat {
	out := mat{a.c, a.r, make([]float64, len(a.d))}
	for i := range a.r {
		for j := range a.c {
			out.d[j*a.r+i] = a.at(i, j)
		}
	}
	return out
}

func eye(n int) mat {
	out := mat{n, n, make([]float64, n*n)}
	for i := range n {
		out.d[i*n+i] = 1
	}
	return out
}

func randMat(rng *rand.Rand, r, c int) mat {
	out := mat{r, c, make([]float64, r*c)}
	for i := range out.d {
		out.d[i] = rng.NormFloat64()
	}
	return out
}

// spd returns a symmetric positive-definite n×n matrix.
func spd(rng *rand.Rand, n int) mat {
	a := randMat(rng, n, n)
	out := a.mul(a.t())
	for i := range n {
		out.d[i*n+i] += float64(n)
	}
	return out
}

func assertClose(t *testing.T, what string, got, want mat, tol float64) {
	t.Helper()
	if got.r != want.r || got.c != want.c {
		t.Fatalf("%s: shape %d×%d, want %d×%d", what, got.r, got.c, want.r, want.c)
	}
	for i := range got.d {
		if math.Abs(got.d[i]-want.d[i]) > tol*(1+math.Abs(want.d[i])) {
			t.Fatalf("%s: element %d is %g, want %g", what, i, got.d[i], want.d[i])
		}
	}
}

// run applies fn to a stack of one matrix (plus a right-hand side) in dtype.
func run(t *testing.T, fn string, dt zarr.DataType, a mat, rhs *mat) (mat, error) {
	t.Helper()
	k := 0
	ins := []Operand{operandOf(dt, a)}
	if rhs != nil {
		k = rhs.c
		ins = append(ins, operandOf(dt, *rhs))
	}
	core, err := LinalgCoreShape(fn, a.r, a.c, k)
	if err != nil {
		return mat{}, err
	}
	size := 1
	for _, n := range core {
		size *= n
	}
	out := Contiguous(dt, make([]byte, size*dt.Size()), append([]int{1}, core...))
	if err := Linalg(fn, out, ins); err != nil {
		return mat{}, err
	}
	res := mat{1, size, make([]float64, size)}
	if len(core) == 2 {
		res.r, res.c = core[0], core[1]
	}
	readFloat64(res.d, out, 0)
	return res, nil
}

func operandOf(dt zarr.DataType, a mat) Operand {
	o := Contiguous(dt, make([]byte, len(a.d)*dt.Size()), []int{1, a.r, a.c})
	writeFloat64(o, 0, a.d)
	return o
}

func TestLinalgDecompositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []zarr.DataType{zarr.Float64, zarr.Float32} {
		tol := 1e-10
		if dt == zarr.Float32 {
			tol = 1e-4
		}
		for _, shape := range [][2]int{{4, 4}, {6, 3}, {3, 6}, {1, 1}} {
			m, n := shape[0], shape[1]
			a := randMat(rng, m, n)
			if dt == zarr.Float32 {
				for i, v := range a.d {
					a.d[i] = float64(float32(v))
				}
			}
			r := min(m, n)
			// QR: Q has orthonormal columns, R is upper triangular, Q·R = A.
			for _, mode := range []string{"", "complete_"} {
				q, _ := run(t, "qr_"+mode+"q", dt, a, nil)
				rr, _ := run(t, "qr_"+mode+"r", dt, a, nil)
				assertClose(t, "Q·R", q.mul(rr), a, tol)
				assertClose(t, "QᵀQ", q.t().mul(q), eye(q.c), tol)
				for i := range rr.r {
					for j := range min(i, rr.c) {
						if rr.at(i, j) != 0 {
							t.Fatalf("R[%d,%d] = %g below the diagonal", i, j, rr.at(i, j))
						}
					}
				}
			}
			// SVD: U·diag(s)·Vh = A with s descending.
			u, _ := run(t, "svd_u", dt, a, nil)
			s, _ := run(t, "svd_s", dt, a, nil)
			vh, _ := run(t, "svd_vh", dt, a, nil)
			us := mat{u.r, r, make([]float64, u.r*r)}
			for i := range u.r {
				for j := range r {
					us.d[i*r+j] = u.at(i, j) * s.d[j]
				}
			}
			assertClose(t, "U·S·Vh", us.mul(vh), a, tol)
			for j := 1; j < r; j++ {
				if s.d[j] > s.d[j-1] {
					t.Fatalf("singular values %v not descending", s.d)
				}
			}
			fu, _ := run(t, "svd_full_u", dt, a, nil)
			fvh, _ := run(t, "svd_full_vh", dt, a, nil)
			assertClose(t, "full U orthogonal", fu.t().mul(fu), eye(m), tol)
			assertClose(t, "full Vh orthogonal", fvh.mul(fvh.t()), eye(n), tol)
		}
		// Square functions.
		n := 5
		a := spd(rng, n)
		l, err := run(t, "cholesky", dt, a, nil)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "L·Lᵀ", l.mul(l.t()), a, tol)
		up, _ := run(t, "cholesky_upper", dt, a, nil)
		assertClose(t, "Uᵀ·U", up.t().mul(up), a, tol)
		inv, _ := run(t, "inv", dt, a, nil)
		assertClose(t, "A·A⁻¹", a.mul(inv), eye(n), tol*10)
		b := randMat(rng, n, 2)
		x, _ := run(t, "solve", dt, a, &b)
		assertClose(t, "A·X", a.mul(x), b, tol*10)
		vals, _ := run(t, "eigh_values", dt, a, nil)
		vecs, _ := run(t, "eigh_vectors", dt, a, nil)
		lam := mat{n, n, make([]float64, n*n)}
		for i := range n {
			lam.d[i*n+i] = vals.d[i]
			if i > 0 && vals.d[i] < vals.d[i-1] {
				t.Fatalf("eigenvalues %v not ascending", vals.d)
			}
		}
		assertClose(t, "A·V", a.mul(vecs), vecs.mul(lam), tol*10)
		det, _ := run(t, "det", dt, a, nil)
		sign, _ := run(t, "slogdet_sign", dt, a, nil)
		logAbs, _ := run(t, "slogdet_logabsdet", dt, a, nil)
		if got := sign.d[0] * math.Exp(logAbs.d[0]); math.Abs(got-det.d[0]) > tol*10*math.Abs(det.d[0]) {
			t.Fatalf("sign·exp(logabsdet) = %g, det = %g", got, det.d[0])
		}
	}
}

func TestLinalgSpecialMatrices(t *testing.T) {
	perm := mat{2, 2, []float64{0, 1, 1, 0}}
	if det, _ := run(t, "det", zarr.Float64, perm, nil); det.d[0] != -1 {
		t.Errorf("det of a swap = %g, want -1", det.d[0])
	}
	singular := mat{2, 2, []float64{1, 2, 2, 4}}
	if det, _ := run(t, "det", zarr.Float64, singular, nil); det.d[0] != 0 {
		t.Errorf("det of a singular matrix = %g, want 0", det.d[0])
	}
	sign, _ := run(t, "slogdet_sign", zarr.Float64, singular, nil)
	logAbs, _ := run(t, "slogdet_logabsdet", zarr.Float64, singular, nil)
	if sign.d[0] != 0 || !math.IsInf(logAbs.d[0], -1) {
		t.Errorf("slogdet of a singular matrix = (%g, %g), want (0, -inf)", sign.d[0], logAbs.d[0])
	}
	var le *LinalgError
	if _, err := run(t, "inv", zarr.Float64, singular, nil); !errors.As(err, &le) {
		t.Errorf("inv of a singular matrix: %v", err)
	}
	if _, err := run(t, "cholesky", zarr.Float64, mat{2, 2, []float64{1, 2, 2, 1}}, nil); !errors.As(err, &le) {
		t.Errorf("cholesky of an indefinite matrix: %v", err)
	}
	if _, err := run(t, "det", zarr.Float64, mat{2, 3, make([]float64, 6)}, nil); err == nil {
		t.Error("det of a 2×3 matrix succeeded")
	}
	if err := Linalg("det", Contiguous(zarr.Int64, make([]byte, 8), []int{1}), nil); err == nil {
		t.Error("det of int64 succeeded")
	}
	if det, _ := run(t, "det", zarr.Float64, mat{0, 0, nil}, nil); det.d[0] != 1 {
		t.Errorf("det of a 0×0 matrix = %g, want 1", det.d[0])
	}
}

func BenchmarkLinalgSVD(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := randMat(rng, 64, 64)
	in := operandOf(zarr.Float64, a)
	out := Contiguous(zarr.Float64, make([]byte, 64*8), []int{1, 64})
	for b.Loop() {
		if err := Linalg("svd_s", out, []Operand{in}); err != nil {
			b.Fatal(err)
		}
	}
}

// cmat is a row-major complex128 matrix for the reference checks.
type cmat struct {
	r, c int
	d    []complex128
}

func (a cmat) at(i, j int) complex128 { return a.d[i*a.c+j] }

func (a cmat) mul(b cmat) cmat {
	out := cmat{a.r, b.c, make([]complex128, a.r*b.c)}
	for i := range a.r {
		for j := range b.c {
			var s complex128
			for p := range a.c {
				s += a.at(i, p) * b.at(p, j)
			}
			out.d[i*b.c+j] = s
		}
	}
	return out
}

// h is the conjugate transpose.
func (a cmat) h() cmat {
	out := cmat{a.c, a.r, make([]complex128, len(a.d))}
	for i := range a.r {
		for j := range a.c {
			out.d[j*a.r+i] = complex(real(a.at(i, j)), -imag(a.at(i, j)))
		}
	}
	return out
}

func ceye(n int) cmat {
	out := cmat{n, n, make([]complex128, n*n)}
	for i := range n {
		out.d[i*n+i] = 1
	}
	return out
}

func randCmat(rng *rand.Rand, r, c int) cmat {
	out := cmat{r, c, make([]complex128, r*c)}
	for i := range out.d {
		out.d[i] = complex(rng.NormFloat64(), rng.NormFloat64())
	}
	return out
}

func assertCClose(t *testing.T, what string, got, want cmat, tol float64) {
	t.Helper()
	if got.r != want.r || got.c != want.c {
		t.Fatalf("%s: shape %d×%d, want %d×%d", what, got.r, got.c, want.r, want.c)
	}
	for i := range got.d {
		d := got.d[i] - want.d[i]
		if math.Hypot(real(d), imag(d)) > tol*(1+math.Hypot(real(want.d[i]), imag(want.d[i]))) {
			t.Fatalf("%s: element %d is %v, want %v", what, i, got.d[i], want.d[i])
		}
	}
}

// crun applies fn to one complex matrix; real outputs come back as complex.
func crun(t *testing.T, fn string, dt zarr.DataType, a cmat, rhs *cmat) cmat {
	t.Helper()
	toOperand := func(x cmat) Operand {
		o := Contiguous(dt, make([]byte, len(x.d)*dt.Size()), []int{1, x.r, x.c})
		writeComplex128(o, 0, x.d)
		return o
	}
	ins := []Operand{toOperand(a)}
	k := 0
	if rhs != nil {
		k = rhs.c
		ins = append(ins, toOperand(*rhs))
	}
	core, err := LinalgCoreShape(fn, a.r, a.c, k)
	if err != nil {
		t.Fatal(err)
	}
	size := 1
	for _, n := range core {
		size *= n
	}
	res := cmat{1, size, make([]complex128, size)}
	if len(core) == 2 {
		res.r, res.c = core[0], core[1]
	}
	outDT := dt
	if LinalgRealOutput(fn) {
		outDT = map[zarr.DataType]zarr.DataType{zarr.Complex64: zarr.Float32, zarr.Complex128: zarr.Float64}[dt]
	}
	out := Contiguous(outDT, make([]byte, size*outDT.Size()), append([]int{1}, core...))
	if err := Linalg(fn, out, ins); err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	if LinalgRealOutput(fn) {
		re := make([]float64, size)
		readFloat64(re, out, 0)
		for i, v := range re {
			res.d[i] = complex(v, 0)
		}
	} else {
		readComplex128(res.d, out, 0)
	}
	return res
}

func TestLinalgComplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dt := range []zarr.DataType{zarr.Complex128, zarr.Complex64} {
		tol := 1e-10
		if dt == zarr.Complex64 {
			tol = 1e-4
		}
		for _, shape := range [][2]int{{4, 4}, {6, 3}, {3, 6}, {1, 1}} {
			m, n := shape[0], shape[1]
			a := randCmat(rng, m, n)
			if dt == zarr.Complex64 {
				for i, v := range a.d {
					a.d[i] = complex128(complex64(v))
				}
			}
			r := min(m, n)
			for _, mode := range []string{"", "complete_"} {
				q := crun(t, "qr_"+mode+"q", dt, a, nil)
				rr := crun(t, "qr_"+mode+"r", dt, a, nil)
				assertCClose(t, "Q·R", q.mul(rr), a, tol)
				assertCClose(t, "QᴴQ", q.h().mul(q), ceye(q.c), tol)
				for i := range rr.r {
					for j := range min(i, rr.c) {
						if rr.at(i, j) != 0 {
							t.Fatalf("R[%d,%d] = %v below the diagonal", i, j, rr.at(i, j))
						}
					}
				}
			}
			u := crun(t, "svd_u", dt, a, nil)
			s := crun(t, "svd_s", dt, a, nil)
			vh := crun(t, "svd_vh", dt, a, nil)
			us := cmat{u.r, r, make([]complex128, u.r*r)}
			for i := range u.r {
				for j := range r {
					us.d[i*r+j] = u.at(i, j) * s.d[j]
				}
			}
			assertCClose(t, "U·S·Vh", us.mul(vh), a, tol)
			for j := 1; j < r; j++ {
				if real(s.d[j]) > real(s.d[j-1]) {
					t.Fatalf("singular values %v not descending", s.d)
				}
			}
			fu := crun(t, "svd_full_u", dt, a, nil)
			fvh := crun(t, "svd_full_vh", dt, a, nil)
			assertCClose(t, "full U unitary", fu.h().mul(fu), ceye(m), tol)
			assertCClose(t, "full Vh unitary", fvh.mul(fvh.h()), ceye(n), tol)
		}
		n := 5
		b := randCmat(rng, n, n)
		a := b.mul(b.h())
		for i := range n {
			a.d[i*n+i] += complex(float64(n), 0)
		}
		l := crun(t, "cholesky", dt, a, nil)
		assertCClose(t, "L·Lᴴ", l.mul(l.h()), a, tol)
		up := crun(t, "cholesky_upper", dt, a, nil)
		assertCClose(t, "Uᴴ·U", up.h().mul(up), a, tol)
		inv := crun(t, "inv", dt, a, nil)
		assertCClose(t, "A·A⁻¹", a.mul(inv), ceye(n), tol*10)
		rhs := randCmat(rng, n, 2)
		x := crun(t, "solve", dt, a, &rhs)
		assertCClose(t, "A·X", a.mul(x), rhs, tol*10)
		// eigh reads the lower triangle only: garbage above it must not matter.
		lowerOnly := cmat{n, n, append([]complex128(nil), a.d...)}
		for i := range n {
			for j := i + 1; j < n; j++ {
				lowerOnly.d[i*n+j] = 99
			}
		}
		w := crun(t, "eigh_values", dt, lowerOnly, nil)
		v := crun(t, "eigh_vectors", dt, lowerOnly, nil)
		lam := cmat{n, n, make([]complex128, n*n)}
		for i := range n {
			lam.d[i*n+i] = w.d[i]
		}
		assertCClose(t, "A·V", a.mul(v), v.mul(lam), tol*10)
		assertCClose(t, "VᴴV", v.h().mul(v), ceye(n), tol*10)
		det := crun(t, "det", dt, a, nil).d[0]
		sign := crun(t, "slogdet_sign", dt, a, nil).d[0]
		logAbs := real(crun(t, "slogdet_logabsdet", dt, a, nil).d[0])
		if got := sign * complex(math.Exp(logAbs), 0); math.Hypot(real(got-det), imag(got-det)) > tol*10*math.Hypot(real(det), imag(det)) {
			t.Fatalf("sign·exp(logabsdet) = %v, det = %v", got, det)
		}
	}
	diag := cmat{2, 2, []complex128{1i, 0, 0, 2}}
	if det := crun(t, "det", zarr.Complex128, diag, nil).d[0]; det != 2i {
		t.Errorf("det(diag(i, 2)) = %v, want 2i", det)
	}
	// A rank-one matrix: U still has orthonormal columns.
	rank1 := cmat{3, 3, []complex128{1, 2, 3, 2, 4, 6, 3, 6, 9}}
	u := crun(t, "svd_u", zarr.Complex128, rank1, nil)
	assertCClose(t, "rank-one U", u.h().mul(u), ceye(3), 1e-10)
	var le *LinalgError
	singular := cmat{2, 2, []complex128{1, 2, 2, 4}}
	toOp := Contiguous(zarr.Complex128, make([]byte, 64), []int{1, 2, 2})
	writeComplex128(toOp, 0, singular.d)
	if err := Linalg("inv", Contiguous(zarr.Complex128, make([]byte, 64), []int{1, 2, 2}), []Operand{toOp}); !errors.As(err, &le) {
		t.Errorf("inv of a singular complex matrix: %v", err)
	}
}
