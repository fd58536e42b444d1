package kernels

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// The eigenproblem of general (non-symmetric) matrices: "eig_values" and
// "eig_vectors", complex for every input dtype. Real matrices go through
// gonum's LAPACK Dgeev (balancing, Hessenberg QR), whose eigenvalue order is
// reference LAPACK's and so numpy's; complex matrices, which gonum does not
// cover, through cEig below. Eigenvectors are the columns of the result,
// each of unit Euclidean norm with its largest component real (LAPACK's
// convention; cEig makes it positive as zgeev does). A matrix with an infinite or NaN entry gives NaN
// eigenvalues and eigenvectors (numpy raises LinAlgError; the other
// matrices of a stack are not held back by one).

// linalgEig computes fn of the n×n row-major matrix: x (real) or cx
// (complex; destroyed), into res.
func linalgEig(fn string, res []complex128, x []float64, cx []complex128, n int) error {
	vectors := fn == "eig_vectors"
	var w, v []complex128
	var ok bool
	if cx != nil {
		w, v, ok = cEig(cx, n, vectors)
	} else {
		w, v, ok = rEig(x, n, vectors)
	}
	if !ok {
		return &LinalgError{Func: "eig", Reason: "did not converge"}
	}
	if vectors {
		copy(res, v)
	} else {
		copy(res, w)
	}
	return nil
}

func nanComplex(s []complex128) {
	for i := range s {
		s[i] = complex(math.NaN(), math.NaN())
	}
}

// rEig is Dgeev on the real matrix a (destroyed).
func rEig(a []float64, n int, vectors bool) (w, v []complex128, ok bool) {
	w = make([]complex128, n)
	if vectors {
		v = make([]complex128, n*n)
	}
	for _, e := range a {
		if math.IsInf(e, 0) || math.IsNaN(e) {
			nanComplex(w)
			nanComplex(v)
			return w, v, true
		}
	}
	g := blas64.General{Rows: n, Cols: n, Stride: n, Data: a}
	wr, wi := make([]float64, n), make([]float64, n)
	jobvr := lapack.RightEVNone
	vr := blas64.General{Stride: 1}
	if vectors {
		jobvr = lapack.RightEVCompute
		vr = blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	}
	work := []float64{0}
	lapack64.Geev(lapack.LeftEVNone, jobvr, g, wr, wi, blas64.General{Stride: 1}, vr, work, -1)
	work = make([]float64, max(int(work[0]), 4*n, 1))
	if first := lapack64.Geev(lapack.LeftEVNone, jobvr, g, wr, wi, blas64.General{Stride: 1}, vr, work, len(work)); first != 0 {
		return nil, nil, false
	}
	for j := range n {
		w[j] = complex(wr[j], wi[j])
	}
	if !vectors {
		return w, nil, true
	}
	// Dgeev stores a conjugate pair's vectors as two real columns: the real
	// part, then the imaginary part of the first (positive imaginary) one.
	for j := 0; j < n; j++ {
		if wi[j] == 0 || j+1 == n {
			for i := range n {
				v[i*n+j] = complex(vr.Data[i*n+j], 0)
			}
			continue
		}
		for i := range n {
			re, im := vr.Data[i*n+j], vr.Data[i*n+j+1]
			v[i*n+j], v[i*n+j+1] = complex(re, im), complex(re, -im)
		}
		j++
	}
	return w, v, true
}

// cEig computes the eigenvalues and (if vectors) the right eigenvectors of
// the complex n×n row-major matrix a (destroyed): Householder reduction to
// upper Hessenberg form, the shifted QR algorithm on it (implicit single
// shifts, Wilkinson's shift with exceptional shifts at iterations 10 and
// 20, as LAPACK's zlahqr) to the complex Schur form T = Zᴴ·A·Z, then the
// eigenvectors of T by back-substitution, mapped back through Z. The matrix
// is scaled by its largest entry first so that no product overflows. ok is
// false if the iteration did not converge (30·n sweeps).
func cEig(a []complex128, n int, vectors bool) (w, v []complex128, ok bool) {
	w = make([]complex128, n)
	if vectors {
		v = make([]complex128, n*n)
	}
	scale := 0.0
	for _, e := range a {
		if !cisfinite(e) {
			nanComplex(w)
			nanComplex(v)
			return w, v, true
		}
		scale = max(scale, cmplx.Abs(e))
	}
	if scale == 0 {
		for j := range n {
			if vectors {
				v[j*n+j] = 1
			}
		}
		return w, v, true
	}
	for i := range a {
		a[i] /= complex(scale, 0)
	}
	var z []complex128
	if vectors {
		z = make([]complex128, n*n)
		for i := range n {
			z[i*n+i] = 1
		}
	}
	hessenberg(a, z, n)
	if !schurQR(a, z, n, vectors) {
		return nil, nil, false
	}
	for k := range n {
		w[k] = a[k*n+k] * complex(scale, 0)
	}
	if vectors {
		schurVectors(a, z, v, n)
	}
	return w, v, true
}

// hessenberg reduces a to upper Hessenberg form by Householder reflections
// H = I - 2·u·uᴴ applied on both sides, accumulating them into z (if not
// nil).
func hessenberg(a, z []complex128, n int) {
	u := make([]complex128, n)
	for k := 0; k+2 < n; k++ {
		norm := 0.0
		for i := k + 1; i < n; i++ {
			norm = math.Hypot(norm, cmplx.Abs(a[i*n+k]))
		}
		if norm == 0 {
			continue
		}
		x0 := a[(k+1)*n+k]
		phase := complex(1, 0)
		if x0 != 0 {
			phase = x0 / complex(cmplx.Abs(x0), 0)
		}
		alpha := -phase * complex(norm, 0) // -e^{i·arg(x0)}·‖x‖: no cancellation in x0 - alpha
		for i := k + 1; i < n; i++ {
			u[i] = a[i*n+k]
		}
		u[k+1] -= alpha
		un := 0.0
		for i := k + 1; i < n; i++ {
			un = math.Hypot(un, cmplx.Abs(u[i]))
		}
		for i := k + 1; i < n; i++ {
			u[i] /= complex(un, 0)
		}
		// A ← H·A (rows k+1..n-1), then A ← A·H (columns k+1..n-1).
		for j := k; j < n; j++ {
			var s complex128
			for i := k + 1; i < n; i++ {
				s += cmplx.Conj(u[i]) * a[i*n+j]
			}
			s *= 2
			for i := k + 1; i < n; i++ {
				a[i*n+j] -= u[i] * s
			}
		}
		rightReflect(a, u, n, k+1, n)
		if z != nil {
			rightReflect(z, u, n, k+1, n)
		}
		a[(k+1)*n+k] = alpha
		for i := k + 2; i < n; i++ {
			a[i*n+k] = 0
		}
	}
}

// rightReflect applies M ← M·(I - 2·u·uᴴ) on columns lo..hi-1 of every row.
func rightReflect(m, u []complex128, n, lo, hi int) {
	for i := range n {
		row := m[i*n : (i+1)*n]
		var s complex128
		for j := lo; j < hi; j++ {
			s += row[j] * u[j]
		}
		s *= 2
		for j := lo; j < hi; j++ {
			row[j] -= s * cmplx.Conj(u[j])
		}
	}
}

func abs1(z complex128) float64 { return math.Abs(real(z)) + math.Abs(imag(z)) }

// givens returns c (real) and s with [c s; -s̄ c]·[x; y] = [r; 0].
func givens(x, y complex128) (float64, complex128) {
	switch {
	case y == 0:
		return 1, 0
	case x == 0:
		return 0, 1
	}
	ax := cmplx.Abs(x)
	norm := math.Hypot(ax, cmplx.Abs(y))
	return ax / norm, (x / complex(ax, 0)) * cmplx.Conj(y) / complex(norm, 0)
}

// schurQR reduces the upper Hessenberg h to upper triangular form by
// shifted QR sweeps, accumulating the rotations into z when full (then the
// whole of h is kept up to date, as the eigenvectors need the full T).
func schurQR(h, z []complex128, n int, full bool) bool {
	const eps = 0x1p-52
	at := func(i, j int) *complex128 { return &h[i*n+j] }
	hnorm := 0.0
	for _, e := range h {
		hnorm = max(hnorm, abs1(e))
	}
	total := 30 * max(10, n)
	its := 0
	for hi := n - 1; hi > 0; {
		// The active block is lo..hi: the deepest negligible subdiagonal.
		lo := hi
		for ; lo > 0; lo-- {
			s := abs1(*at(lo-1, lo-1)) + abs1(*at(lo, lo))
			if s == 0 {
				s = hnorm
			}
			if abs1(*at(lo, lo-1)) <= eps*s {
				*at(lo, lo-1) = 0
				break
			}
		}
		if lo == hi {
			hi-- // h[hi][hi] is an eigenvalue
			its = 0
			continue
		}
		if total--; total < 0 {
			return false
		}
		its++
		var mu complex128
		switch its {
		case 10:
			mu = *at(lo, lo) + complex(0.75*math.Abs(real(*at(lo+1, lo))), 0)
		case 20:
			mu = *at(hi, hi) + complex(0.75*math.Abs(real(*at(hi, hi-1))), 0)
		default:
			// Wilkinson: the eigenvalue of the trailing 2×2 nearer h[hi][hi].
			a11, a12, a21, a22 := *at(hi-1, hi-1), *at(hi-1, hi), *at(hi, hi-1), *at(hi, hi)
			half := (a11 - a22) / 2
			d := cmplx.Sqrt(half*half + a12*a21)
			if real(half)*real(d)+imag(half)*imag(d) < 0 {
				d = -d
			}
			den := half + d
			mu = a22
			if den != 0 {
				mu = a22 - a12*a21/den
			}
		}
		// One implicit QR sweep on lo..hi, chasing the bulge down.
		cLo, cHi := lo, hi
		if full {
			cLo, cHi = 0, n-1
		}
		x, y := *at(lo, lo)-mu, *at(lo+1, lo)
		for k := lo; k < hi; k++ {
			if k > lo {
				x, y = *at(k, k-1), *at(k+1, k-1)
			}
			c, s := givens(x, y)
			cc := complex(c, 0)
			// Rows k, k+1 from column max(lo, k-1) (left of it they are zero) to the right edge.
			for j := max(lo, k-1); j <= cHi; j++ {
				t1, t2 := *at(k, j), *at(k+1, j)
				*at(k, j) = cc*t1 + s*t2
				*at(k+1, j) = -cmplx.Conj(s)*t1 + cc*t2
			}
			if k > lo {
				*at(k+1, k-1) = 0
			}
			// Columns k, k+1 from the top edge down to row min(k+2, hi).
			for i := cLo; i <= min(k+2, hi); i++ {
				t1, t2 := *at(i, k), *at(i, k+1)
				*at(i, k) = t1*cc + t2*cmplx.Conj(s)
				*at(i, k+1) = -t1*s + t2*cc
			}
			if z != nil {
				for i := range n {
					t1, t2 := z[i*n+k], z[i*n+k+1]
					z[i*n+k] = t1*cc + t2*cmplx.Conj(s)
					z[i*n+k+1] = -t1*s + t2*cc
				}
			}
		}
	}
	return true
}

// schurVectors computes the eigenvectors of A = Z·T·Zᴴ into the columns of
// v: for each k, the solution y of (T - t_kk·I)·y = 0 with y_k = 1 by
// back-substitution (a denominator below eps·‖T‖ is raised to it, as
// LAPACK's ztrevc does for repeated eigenvalues), then Z·y, normalized to
// unit norm with its largest component real and positive.
func schurVectors(t, z, v []complex128, n int) {
	const eps = 0x1p-52
	tnorm := 0.0
	for _, e := range t {
		tnorm = max(tnorm, abs1(e))
	}
	smin := max(eps*tnorm, math.SmallestNonzeroFloat64*0x1p60)
	y := make([]complex128, n)
	col := make([]complex128, n)
	for k := range n {
		lambda := t[k*n+k]
		clear(y)
		y[k] = 1
		for j := k - 1; j >= 0; j-- {
			var s complex128
			for l := j + 1; l <= k; l++ {
				s += t[j*n+l] * y[l]
			}
			d := t[j*n+j] - lambda
			if abs1(d) < smin {
				d = complex(smin, 0)
			}
			y[j] = -s / d
			if m := abs1(y[j]); m > 1e100 { // rescale before growth overflows
				for l := j; l <= k; l++ {
					y[l] /= complex(m, 0)
				}
			}
		}
		norm, big, at := 0.0, -1.0, 0
		for i := range n {
			var s complex128
			for l := 0; l <= k; l++ {
				s += z[i*n+l] * y[l]
			}
			col[i] = s
			a := cmplx.Abs(s)
			norm = math.Hypot(norm, a)
			if a > big {
				big, at = a, i
			}
		}
		rot := cmplx.Conj(col[at]) / complex(big*norm, 0)
		for i := range n {
			v[i*n+k] = col[i] * rot
		}
		v[at*n+k] = complex(cmplx.Abs(col[at])/norm, 0) // exactly real
	}
}
