package kernels

import (
	"cmp"
	"math"
	"math/cmplx"
	"slices"
)

// Complex whole-matrix functions. gonum's LAPACK is real-only, so these are
// the textbook algorithms in complex128: LU with partial pivoting (det,
// slogdet, inv, solve), Cholesky, Householder QR, cyclic Jacobi for
// Hermitian eigenproblems and one-sided (Hestenes) Jacobi for the SVD. The
// Jacobi methods converge quadratically and are accurate to a few ulps
// relative to the matrix norm; they cost a few times LAPACK's flops, which
// matters little next to reading the matrices.

// jacobiSweeps bounds the sweeps of the Jacobi methods (they converge in
// well under 20 for any matrix; the bound only guards against NaNs).
const jacobiSweeps = 60

// linalgComplex computes fn of the m×n row-major matrix x (destroyed) into
// res (row-major, LinalgCoreShape), for outputs that are complex; real
// outputs (singular values, eigenvalues, log|det|) go to resReal.
func linalgComplex(fn string, res []complex128, resReal []float64, x, rhs []complex128, m, n, k int) error {
	switch fn {
	case "det", "slogdet_sign", "slogdet_logabsdet":
		det, sign, logAbs := cLUDeterminant(x, n)
		switch fn {
		case "det":
			res[0] = det
		case "slogdet_sign":
			res[0] = sign
		default:
			resReal[0] = logAbs
		}
		return nil
	case "inv":
		b := make([]complex128, n*n)
		for i := range n {
			b[i*n+i] = 1
		}
		if !cSolve(x, b, n, n) {
			return &LinalgError{Func: "inv", Reason: "is singular"}
		}
		copy(res, b)
		return nil
	case "solve":
		copy(res, rhs)
		if !cSolve(x, res, n, k) {
			return &LinalgError{Func: "solve", Reason: "is singular"}
		}
		return nil
	case "cholesky", "cholesky_upper":
		return cCholesky(fn, res, x, n, fn == "cholesky_upper")
	case "qr_q", "qr_r", "qr_complete_q", "qr_complete_r":
		cQR(fn, res, x, m, n)
		return nil
	case "eigh_values", "eigh_vectors":
		w, v := cEigh(x, n, fn == "eigh_vectors")
		if fn == "eigh_values" {
			copy(resReal, w)
		} else {
			copy(res, v)
		}
		return nil
	case "svd_u", "svd_s", "svd_vh", "svd_full_u", "svd_full_vh":
		return cSVD(fn, res, resReal, x, m, n)
	}
	return &LinalgError{Func: fn, Reason: "is not supported for complex matrices"}
}

// cLU factors the n×n matrix a in place as P·L·U (unit lower L) and
// returns the row of each pivot and the number of row swaps; ok is false if
// a pivot is exactly zero.
func cLU(a []complex128, n int) (piv []int, swaps int, ok bool) {
	piv = make([]int, n)
	ok = true
	for j := range n {
		p := j
		for i := j + 1; i < n; i++ {
			if cmplx.Abs(a[i*n+j]) > cmplx.Abs(a[p*n+j]) {
				p = i
			}
		}
		piv[j] = p
		if p != j {
			swaps++
			for c := range n {
				a[j*n+c], a[p*n+c] = a[p*n+c], a[j*n+c]
			}
		}
		d := a[j*n+j]
		if d == 0 {
			ok = false
			continue
		}
		for i := j + 1; i < n; i++ {
			f := a[i*n+j] / d
			a[i*n+j] = f
			for c := j + 1; c < n; c++ {
				a[i*n+c] -= f * a[j*n+c]
			}
		}
	}
	return piv, swaps, ok
}

func cLUDeterminant(a []complex128, n int) (det, sign complex128, logAbs float64) {
	_, swaps, _ := cLU(a, n)
	det, sign = 1, 1
	if swaps%2 == 1 {
		det, sign = -1, -1
	}
	for i := range n {
		d := a[i*n+i]
		det *= d
		r := cmplx.Abs(d)
		if r == 0 {
			sign = 0
		} else {
			sign *= d / complex(r, 0)
		}
		logAbs += math.Log(r)
	}
	if sign == 0 {
		logAbs = math.Inf(-1)
	}
	return det, sign, logAbs
}

// cSolve overwrites the n×k matrix b with the solution of a·X = b (a is
// destroyed); false if a is singular.
func cSolve(a, b []complex128, n, k int) bool {
	piv, _, ok := cLU(a, n)
	if !ok {
		return false
	}
	for j, p := range piv {
		if p != j {
			for c := range k {
				b[j*k+c], b[p*k+c] = b[p*k+c], b[j*k+c]
			}
		}
	}
	for i := range n { // L·y = P·b
		for j := range i {
			f := a[i*n+j]
			for c := range k {
				b[i*k+c] -= f * b[j*k+c]
			}
		}
	}
	for i := n - 1; i >= 0; i-- { // U·x = y
		for j := i + 1; j < n; j++ {
			f := a[i*n+j]
			for c := range k {
				b[i*k+c] -= f * b[j*k+c]
			}
		}
		d := a[i*n+i]
		for c := range k {
			b[i*k+c] /= d
		}
	}
	return true
}

// cCholesky factors the Hermitian positive-definite a from its lower
// triangle as L·Lᴴ, or from its upper triangle as Uᴴ·U.
func cCholesky(fn string, res, a []complex128, n int, upper bool) error {
	// lower(i, j), i ≥ j: the lower triangle, or the conjugated upper one.
	lower := func(i, j int) complex128 {
		if upper {
			return cmplx.Conj(a[j*n+i])
		}
		return a[i*n+j]
	}
	l := make([]complex128, n*n)
	for j := range n {
		d := real(lower(j, j))
		for c := range j {
			v := l[j*n+c]
			d -= real(v)*real(v) + imag(v)*imag(v)
		}
		if !(d > 0) {
			return &LinalgError{Func: fn, Reason: "is not positive definite"}
		}
		ljj := math.Sqrt(d)
		l[j*n+j] = complex(ljj, 0)
		for i := j + 1; i < n; i++ {
			s := lower(i, j)
			for c := range j {
				s -= l[i*n+c] * cmplx.Conj(l[j*n+c])
			}
			l[i*n+j] = s / complex(ljj, 0)
		}
	}
	for i := range n {
		for j := range n {
			if upper {
				res[i*n+j] = cmplx.Conj(l[j*n+i])
			} else {
				res[i*n+j] = l[i*n+j]
			}
		}
	}
	return nil
}

// householder returns the unit vector v and scalar alpha with
// (I - 2·v·vᴴ)·x = alpha·e₀ (v nil when x is zero).
func householder(x []complex128) ([]complex128, complex128) {
	var norm float64
	for _, e := range x {
		norm = math.Hypot(norm, cmplx.Abs(e))
	}
	if norm == 0 {
		return nil, 0
	}
	phase := complex(1, 0)
	if r := cmplx.Abs(x[0]); r != 0 {
		phase = x[0] / complex(r, 0)
	}
	alpha := -phase * complex(norm, 0)
	v := append([]complex128(nil), x...)
	v[0] -= alpha
	var vn float64
	for _, e := range v {
		vn = math.Hypot(vn, cmplx.Abs(e))
	}
	if vn == 0 {
		return nil, x[0]
	}
	for i := range v {
		v[i] /= complex(vn, 0)
	}
	return v, alpha
}

// applyReflector computes rows [r0, r0+len(v)) of the matrix a (cols
// columns, from column c0) ← (I - 2·v·vᴴ)·a.
func applyReflector(v, a []complex128, cols, r0, c0 int) {
	for c := c0; c < cols; c++ {
		var s complex128
		for i, e := range v {
			s += cmplx.Conj(e) * a[(r0+i)*cols+c]
		}
		s *= 2
		for i, e := range v {
			a[(r0+i)*cols+c] -= e * s
		}
	}
}

// cQR computes a Householder QR factorization of the m×n matrix a.
func cQR(fn string, res, a []complex128, m, n int) {
	r := min(m, n)
	vs := make([][]complex128, r)
	x := make([]complex128, m)
	for j := range r {
		x = x[:m-j]
		for i := j; i < m; i++ {
			x[i-j] = a[i*n+j]
		}
		v, _ := householder(x)
		vs[j] = v
		if v != nil {
			applyReflector(v, a, n, j, j)
		}
	}
	switch fn {
	case "qr_r", "qr_complete_r":
		rows := r
		if fn == "qr_complete_r" {
			rows = m
		}
		for i := range rows {
			for j := range n {
				var v complex128
				if i < r && j >= i {
					v = a[i*n+j]
				}
				res[i*n+j] = v
			}
		}
		return
	}
	cols := r
	if fn == "qr_complete_q" {
		cols = m
	}
	// Q = H₀·H₁·…·H_{r-1} applied to the first cols columns of the identity.
	clear(res[:m*cols])
	for i := range min(m, cols) {
		res[i*cols+i] = 1
	}
	for j := r - 1; j >= 0; j-- {
		if vs[j] != nil {
			applyReflector(vs[j], res, cols, j, 0)
		}
	}
}

// rotation returns the 2×2 unitary [[c, s], [-conj(s)·…]] entries that
// make the Hermitian [[alpha, gamma], [conj(gamma), beta]] diagonal when
// applied as Uᴴ·H·U: U = [[c, s·e^{iφ}], [-s·e^{-iφ}, c]] with real c, s.
// It returns U's four entries.
func rotation(alpha, beta float64, gamma complex128) (upp, upq, uqp, uqq complex128) {
	g := cmplx.Abs(gamma)
	phase := gamma / complex(g, 0)
	tau := (beta - alpha) / (2 * g)
	t := 1 / (math.Abs(tau) + math.Sqrt(1+tau*tau))
	if tau < 0 {
		t = -t
	}
	c := 1 / math.Sqrt(1+t*t)
	s := t * c
	return complex(c, 0), complex(s, 0) * phase, complex(-s, 0) * cmplx.Conj(phase), complex(c, 0)
}

// cEigh returns the eigenvalues (ascending) and, if vectors, the
// eigenvectors (columns, row-major) of the Hermitian a, read from its lower
// triangle, by cyclic Jacobi rotations.
func cEigh(a []complex128, n int, vectors bool) ([]float64, []complex128) {
	for i := range n { // Hermitian from the lower triangle
		a[i*n+i] = complex(real(a[i*n+i]), 0)
		for j := i + 1; j < n; j++ {
			a[i*n+j] = cmplx.Conj(a[j*n+i])
		}
	}
	v := make([]complex128, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	for range jacobiSweeps {
		var off, total float64
		for i := range n {
			for j := range n {
				e := cmplx.Abs(a[i*n+j])
				total = math.Hypot(total, e)
				if i != j {
					off = math.Hypot(off, e)
				}
			}
		}
		if !(off > 1e-17*total) {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				gamma := a[p*n+q]
				if gamma == 0 {
					continue
				}
				upp, upq, uqp, uqq := rotation(real(a[p*n+p]), real(a[q*n+q]), gamma)
				for k := range n { // columns: A·U
					akp, akq := a[k*n+p], a[k*n+q]
					a[k*n+p] = akp*upp + akq*uqp
					a[k*n+q] = akp*upq + akq*uqq
				}
				for k := range n { // rows: Uᴴ·A
					apk, aqk := a[p*n+k], a[q*n+k]
					a[p*n+k] = cmplx.Conj(upp)*apk + cmplx.Conj(uqp)*aqk
					a[q*n+k] = cmplx.Conj(upq)*apk + cmplx.Conj(uqq)*aqk
				}
				a[p*n+q], a[q*n+p] = 0, 0
				a[p*n+p] = complex(real(a[p*n+p]), 0)
				a[q*n+q] = complex(real(a[q*n+q]), 0)
				for k := range n {
					vkp, vkq := v[k*n+p], v[k*n+q]
					v[k*n+p] = vkp*upp + vkq*uqp
					v[k*n+q] = vkp*upq + vkq*uqq
				}
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(real(a[i*n+i]), real(a[j*n+j])) })
	w := make([]float64, n)
	var vs []complex128
	if vectors {
		vs = make([]complex128, n*n)
	}
	for c, o := range order {
		w[c] = real(a[o*n+o])
		if vectors {
			for r := range n {
				vs[r*n+c] = v[r*n+o]
			}
		}
	}
	return w, vs
}

// cSVD computes the singular value decomposition of the m×n matrix a by
// one-sided Jacobi rotations of its columns (of aᴴ's when m < n).
func cSVD(fn string, res []complex128, resReal []float64, a []complex128, m, n int) error {
	if m < n {
		// a = U·S·Vh ⇔ aᴴ = V·S·Uᴴ: swap the roles of U and Vh.
		at := make([]complex128, n*m)
		for i := range m {
			for j := range n {
				at[j*m+i] = cmplx.Conj(a[i*n+j])
			}
		}
		swapped := map[string]string{"svd_u": "svd_vh", "svd_vh": "svd_u", "svd_full_u": "svd_full_vh", "svd_full_vh": "svd_full_u", "svd_s": "svd_s"}[fn]
		tmp := make([]complex128, len(res))
		if err := cSVD(swapped, tmp, resReal, at, n, m); err != nil || fn == "svd_s" {
			return err
		}
		// The result for aᴴ, conjugate-transposed.
		rows, cols := svdShape(fn, m, n)
		for i := range rows {
			for j := range cols {
				res[i*cols+j] = cmplx.Conj(tmp[j*rows+i])
			}
		}
		return nil
	}
	// m ≥ n: orthogonalize the columns of a; V accumulates the rotations.
	v := make([]complex128, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	col := func(j int) func(int) *complex128 {
		return func(i int) *complex128 { return &a[i*n+j] }
	}
	for range jacobiSweeps {
		rotated := false
		for p := range n {
			for q := p + 1; q < n; q++ {
				ap, aq := col(p), col(q)
				var alpha, beta float64
				var gamma complex128
				for i := range m {
					x, y := *ap(i), *aq(i)
					alpha += real(x)*real(x) + imag(x)*imag(x)
					beta += real(y)*real(y) + imag(y)*imag(y)
					gamma += cmplx.Conj(x) * y
				}
				if cmplx.Abs(gamma) <= 1e-16*math.Sqrt(alpha*beta) || gamma == 0 {
					continue
				}
				rotated = true
				upp, upq, uqp, uqq := rotation(alpha, beta, gamma)
				for i := range m {
					x, y := *ap(i), *aq(i)
					*ap(i) = x*upp + y*uqp
					*aq(i) = x*upq + y*uqq
				}
				for i := range n {
					x, y := v[i*n+p], v[i*n+q]
					v[i*n+p] = x*upp + y*uqp
					v[i*n+q] = x*upq + y*uqq
				}
			}
		}
		if !rotated {
			break
		}
	}
	s := make([]float64, n)
	for j := range n {
		for i := range m {
			s[j] = math.Hypot(s[j], cmplx.Abs(a[i*n+j]))
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(s[j], s[i]) })
	switch fn {
	case "svd_s":
		for c, o := range order {
			resReal[c] = s[o]
		}
		return nil
	case "svd_vh", "svd_full_vh":
		// Vh = Vᴴ with V's columns in order (n×n: reduced and full agree).
		for r, o := range order {
			for c := range n {
				res[r*n+c] = cmplx.Conj(v[c*n+o])
			}
		}
		return nil
	}
	cols := n
	if fn == "svd_full_u" {
		cols = m
	}
	u := make([]complex128, m*cols)
	for c, o := range order {
		if s[o] == 0 {
			continue // completed below
		}
		for i := range m {
			u[i*cols+c] = a[i*n+o] / complex(s[o], 0)
		}
	}
	completeOrthonormal(u, m, cols, func(c int) bool { return c >= n || s[order[c]] == 0 })
	copy(res, u)
	return nil
}

func svdShape(fn string, m, n int) (int, int) {
	r := min(m, n)
	switch fn {
	case "svd_u":
		return m, r
	case "svd_vh":
		return r, n
	case "svd_full_u":
		return m, m
	case "svd_full_vh":
		return n, n
	}
	return 1, r
}

// completeOrthonormal fills the columns of the m×cols matrix u for which
// missing(c) holds with unit vectors orthogonal to all others (Gram-Schmidt,
// twice, against the standard basis vectors).
func completeOrthonormal(u []complex128, m, cols int, missing func(int) bool) {
	have := make([]bool, cols)
	for c := range cols {
		have[c] = !missing(c)
	}
	next := 0 // next standard basis vector to try
	for c := range cols {
		if have[c] {
			continue
		}
		for ; next < m; next++ {
			w := make([]complex128, m)
			w[next] = 1
			for range 2 {
				for o := range cols {
					if !have[o] {
						continue
					}
					var d complex128
					for i := range m {
						d += cmplx.Conj(u[i*cols+o]) * w[i]
					}
					for i := range m {
						w[i] -= d * u[i*cols+o]
					}
				}
			}
			var norm float64
			for _, e := range w {
				norm = math.Hypot(norm, cmplx.Abs(e))
			}
			if norm > 1e-8 {
				for i := range m {
					u[i*cols+c] = w[i] / complex(norm, 0)
				}
				have[c] = true
				next++
				break
			}
		}
	}
}
