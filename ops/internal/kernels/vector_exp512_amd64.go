//go:build goexperiment.simd && amd64

package kernels

import (
	"math"
	"math/big"
	"simd/archsimd"
)

// Vector exp of float64 in AVX-512, eight lanes at a time, with a table.
//
// The AVX2 method (vector_exp_amd64.go) reduces x by whole multiples of
// ln2 and needs a polynomial of degree 13 on [−ln2/2, ln2/2]. With
// AVX-512 a 16-entry table fits in two registers and is read with one
// two-register permute (VPERMI2PD), so x is reduced by multiples of ln2/16
// instead: kq is x·log2(e) rounded to a multiple of 1/16, and
// x = kq·ln2 + r with |r| ≤ ln2/32. Then
// exp(x) = 2^⌊kq⌋ · 2^(j/16) · exp(r), j = 16·kq mod 16, and
// exp(r) = 1 + p, p = r + r²·Q(r). Q is the polynomial of degree 4 that
// interpolates (e^r − 1 − r)/r² at the Chebyshev points of the interval
// (expQCoef): nearly the best of its degree, it is within 6e-14 of Q, which
// r² ≤ 4.7e-4 scales to about 0.15 ULP of the result. 2^(j/16) is held as
// a rounded hi and the rounded rest lo, so that y = hi + (hi·p + lo) rounds
// once at the scale of the result, and VSCALEFPD multiplies y by 2^⌊kq⌋
// exactly. Measured error (TestVectorMathAccuracy): 0.70 ULP from the
// exact value at most, as numpy's own AVX-512 exp (0.70 ULP over 2 million
// inputs on this machine); math.Exp reaches 1.6.
//
// Every 512-bit floating-point instruction issues on one port of the CPUs
// measured (a 512-bit FMA chain ran at 2.6 G instructions/s, a 256-bit one
// at 4.3–5.1), so the speed is the count of those: 13 per eight lanes,
// against 28 per four for the AVX2 method. A degree-5 Q (0.53 ULP) costs
// one more and ran 20% slower, and reading the constants from a struct in
// memory instead of registers a third slower. The range test is made once
// per pair of vectors.
//
// The range is the AVX2 method's, |x| ≤ 708, where the result is normal.
// Other lanes (|x| > 708, ±Inf, NaN) are math.Exp's, as in the AVX2 loop.

// exp2Sixteenths holds 2^(j/16) for j = 0..15 as hi (rounded) and lo (the
// rest, rounded), from 256-bit arithmetic.
var exp2Sixteenths = func() (t [2][16]float64) {
	const prec = 256
	for j := range 16 {
		v := new(big.Float).SetPrec(prec).SetInt64(1 << j)
		for range 4 { // 2^(j/16) = √√√√(2^j)
			v.Sqrt(v)
		}
		hi, _ := v.Float64()
		rest := new(big.Float).SetPrec(prec).Sub(v, new(big.Float).SetFloat64(hi))
		lo, _ := rest.Float64()
		t[0][j], t[1][j] = hi, lo
	}
	return t
}()

// expQCoef are the coefficients, from r⁰ up, of the polynomial of degree 4
// that equals Q(r) = (e^r − 1 − r)/r² = Σ r^n/(n+2)! at the five Chebyshev
// points of [−ln2/32, ln2/32]. Q's values come from its series (terms
// below 1e-30 dropped) and the 5×5 system is solved in the scaled variable
// r/(ln2/32), where it is well conditioned.
var expQCoef = func() [5]float64 {
	const n = 5
	h := math.Ln2 / 32
	var a [n][n + 1]float64
	for i := range n {
		u := math.Cos(float64(2*i+1) * math.Pi / (2 * n))
		r, q, term := u*h, 0.0, 0.5 // term = r^k/(k+2)!
		for k := 0; k < 16; k++ {
			q += term
			term *= r / float64(k+3)
		}
		for m, p := 0, 1.0; m < n; m, p = m+1, p*u {
			a[i][m] = p
		}
		a[i][n] = q
	}
	for col := range n { // Gaussian elimination with partial pivoting
		piv := col
		for i := col + 1; i < n; i++ {
			if math.Abs(a[i][col]) > math.Abs(a[piv][col]) {
				piv = i
			}
		}
		a[col], a[piv] = a[piv], a[col]
		for i := range n {
			if i != col {
				f := a[i][col] / a[col][col]
				for m := col; m <= n; m++ {
					a[i][m] -= f * a[col][m]
				}
			}
		}
	}
	var c [n]float64
	for m := range n {
		c[m] = a[m][n] / a[m][m] / math.Pow(h, float64(m))
	}
	return c
}()

type exp512Consts struct {
	log2e, shifter, negLn2Hi, negLn2Lo, limit archsimd.Float64x8
	hi0, hi1, lo0, lo1                        archsimd.Float64x8 // the table: entries 0–7 and 8–15
	absMask                                   archsimd.Int64x8
	c                                         [5]archsimd.Float64x8
}

func newExp512Consts() exp512Consts {
	e := exp512Consts{
		log2e:    archsimd.BroadcastFloat64x8(math.Log2E),
		shifter:  archsimd.BroadcastFloat64x8(0x1.8p48), // adding it rounds to a multiple of 1/16
		negLn2Hi: archsimd.BroadcastFloat64x8(-ln2Hi),
		negLn2Lo: archsimd.BroadcastFloat64x8(-ln2Lo),
		limit:    archsimd.BroadcastFloat64x8(expLimit),
		hi0:      archsimd.LoadFloat64x8Slice(exp2Sixteenths[0][:8]),
		hi1:      archsimd.LoadFloat64x8Slice(exp2Sixteenths[0][8:]),
		lo0:      archsimd.LoadFloat64x8Slice(exp2Sixteenths[1][:8]),
		lo1:      archsimd.LoadFloat64x8Slice(exp2Sixteenths[1][8:]),
		absMask:  archsimd.BroadcastInt64x8(math.MaxInt64),
	}
	for i, c := range expQCoef {
		e.c[i] = archsimd.BroadcastFloat64x8(c)
	}
	return e
}

// inside is the mask of the lanes of x that expVec computes: |x| ≤ 708.
func (e *exp512Consts) inside(x archsimd.Float64x8) archsimd.Mask64x8 {
	return x.AsInt64x8().And(e.absMask).AsFloat64x8().LessEqual(e.limit)
}

// expVec is exp of eight lanes with |x| ≤ 708, with e's vectors passed
// as arguments: Go keeps these in registers across the loop, where it
// would load the fields of e from memory at every use (a third slower).
func expVec(x, log2e, shifter, negLn2Hi, negLn2Lo, c0, c1, c2, c3, c4, hi0, hi1, lo0, lo1 archsimd.Float64x8) archsimd.Float64x8 {
	// t's low mantissa bits hold 16·kq: the low 4 index the table.
	t := x.MulAdd(log2e, shifter)
	kq := t.Sub(shifter)
	// kq has at most 15 significant bits and ln2Hi 32, so kq·ln2Hi is exact.
	r := kq.MulAdd(negLn2Lo, kq.MulAdd(negLn2Hi, x))
	q := c4.MulAdd(r, c3)
	q = q.MulAdd(r, c2)
	q = q.MulAdd(r, c1)
	q = q.MulAdd(r, c0)
	p := r.Mul(r).MulAdd(q, r)
	idx := t.AsUint64x8()
	hi := hi0.ConcatPermute(hi1, idx)
	lo := lo0.ConcatPermute(lo1, idx)
	return hi.MulAdd(p, lo).Add(hi).Scale(kq)
}

// expFloat64AVX512 is d[i] = exp(xs[i]) within 1 ULP of math.Exp (closer
// to the exact value where they differ), each result depending only on its
// value, as in expFloat64.
func expFloat64AVX512(d, xs []float64) {
	const w = lanes512Float64
	xs = xs[:len(d)]
	e := newExp512Consts()
	l2e, sh, nh, nl := e.log2e, e.shifter, e.negLn2Hi, e.negLn2Lo
	c0, c1, c2, c3, c4 := e.c[0], e.c[1], e.c[2], e.c[3], e.c[4]
	h0, h1, l0, l1 := e.hi0, e.hi1, e.lo0, e.lo1
	for len(d) >= 2*w {
		x0 := archsimd.LoadFloat64x8Slice(xs[:w])
		x1 := archsimd.LoadFloat64x8Slice(xs[w : 2*w])
		expVec(x0, l2e, sh, nh, nl, c0, c1, c2, c3, c4, h0, h1, l0, l1).StoreSlice(d[:w])
		expVec(x1, l2e, sh, nh, nl, c0, c1, c2, c3, c4, h0, h1, l0, l1).StoreSlice(d[w : 2*w])
		if e.inside(x0).ToBits()&e.inside(x1).ToBits() != 1<<w-1 {
			redoExpOutside(d[:2*w], xs[:2*w])
		}
		d, xs = d[2*w:], xs[2*w:]
	}
	for len(d) > 0 {
		var buf [w]float64
		n := copy(buf[:], xs)
		expVec(archsimd.LoadFloat64x8Slice(buf[:]), l2e, sh, nh, nl, c0, c1, c2, c3, c4, h0, h1, l0, l1).StoreSlice(buf[:])
		copy(d, buf[:n])
		redoExpOutside(d[:n], xs[:n])
		d, xs = d[n:], xs[n:]
	}
}

// redoExpOutside recomputes by math.Exp the elements of d whose input is
// outside expVec's range (or NaN).
func redoExpOutside(d, xs []float64) {
	clearUpper() // the scalar code is legacy SSE
	for i, v := range xs {
		if !(math.Abs(v) <= expLimit) {
			d[i] = math.Exp(v)
		}
	}
}
