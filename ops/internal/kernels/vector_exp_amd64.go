//go:build goexperiment.simd && amd64

package kernels

import (
	"math"
	"simd/archsimd"
)

// Vector exp (AVX2 + FMA), four float64 lanes at a time.
//
// For |x| ≤ 708 (and not NaN): k = round(x/ln2) and exp(x) = 2^k·exp(r) with
// r = x − k·ln2 in [−ln2/2, ln2/2]. ln2 is split in ln2Hi, whose product
// with any such k is exact, and ln2Lo, so hi = x − k·ln2Hi is exact and
// r = hi − lo with lo = k·ln2Lo. exp(r) = 1 + r + r²·Q(r), Q the Taylor
// polynomial of degree 11 (terms up to r^13/13!: truncation below 5e-18
// relative). The sum 1 + hi is split into its rounded value and its exact
// error (Fast2Sum), so only the final addition rounds at the scale of the
// result: the error is about 0.51 ULP, within 1 ULP of math.Exp (the test
// measures it). 2^k is added to the exponent field: k ∈ [−1021, 1021] keeps
// the result normal. Every other lane (|x| > 708, ±Inf, NaN) is computed by
// math.Exp, so overflow, underflow, subnormal results and special values are
// math.Exp's bits.

const (
	expLimit   = 708
	expShifter = 0x1.8p52 // adding it rounds to an integer held in the low mantissa bits
	ln2Hi      = 6.93147180369123816490e-01
	ln2Lo      = 1.90821492927058770002e-10
)

// expCoef[i] = 1/(i+2)!, the coefficients of Q.
var expCoef = func() (c [12]float64) {
	f := 1.0
	for n := 1; n <= 13; n++ {
		f *= float64(n) // exact: 13! < 2^53
		if n >= 2 {
			c[n-2] = 1 / f
		}
	}
	return c
}()

// expConsts holds expVec's constants as vectors, made once per call (on the stack).
type expConsts struct {
	log2e, shifter, negLn2Hi, ln2Lo, one, limit archsimd.Float64x4
	absMask                                     archsimd.Int64x4
	c                                           [12]archsimd.Float64x4
}

func newExpConsts() expConsts {
	e := expConsts{
		log2e:    archsimd.BroadcastFloat64x4(math.Log2E),
		shifter:  archsimd.BroadcastFloat64x4(expShifter),
		negLn2Hi: archsimd.BroadcastFloat64x4(-ln2Hi),
		ln2Lo:    archsimd.BroadcastFloat64x4(ln2Lo),
		one:      archsimd.BroadcastFloat64x4(1),
		limit:    archsimd.BroadcastFloat64x4(expLimit),
		absMask:  archsimd.BroadcastInt64x4(math.MaxInt64),
	}
	for i, c := range expCoef {
		e.c[i] = archsimd.BroadcastFloat64x4(c)
	}
	return e
}

// outside returns the mask (bit i for lane i) of the lanes of x that
// expVec does not compute: |x| > 708 or NaN.
func (e *expConsts) outside(x archsimd.Float64x4) uint64 {
	ax := x.AsInt64x4().And(e.absMask).AsFloat64x4()
	return uint64(^ax.LessEqual(e.limit).ToBits()) & (1<<lanesFloat64 - 1)
}

// expVec is exp of four lanes with |x| ≤ 708.
func (e *expConsts) expVec(x archsimd.Float64x4) archsimd.Float64x4 {
	t := x.MulAdd(e.log2e, e.shifter)
	k := t.Sub(e.shifter)
	hi := k.MulAdd(e.negLn2Hi, x)
	lo := k.Mul(e.ln2Lo)
	r := hi.Sub(lo)
	c := &e.c
	q := c[11].MulAdd(r, c[10])
	q = q.MulAdd(r, c[9])
	q = q.MulAdd(r, c[8])
	q = q.MulAdd(r, c[7])
	q = q.MulAdd(r, c[6])
	q = q.MulAdd(r, c[5])
	q = q.MulAdd(r, c[4])
	q = q.MulAdd(r, c[3])
	q = q.MulAdd(r, c[2])
	q = q.MulAdd(r, c[1])
	q = q.MulAdd(r, c[0])
	a := e.one.Add(hi)
	err := e.one.Sub(a).Add(hi)
	y := a.Add(r.Mul(r).MulAdd(q, err.Sub(lo)))
	// t's low bits hold k: shifted to the exponent field, they scale y by 2^k.
	return y.AsInt64x4().Add(t.AsInt64x4().ShiftAllLeft(52)).AsFloat64x4()
}

// expFloat64 is d[i] = math.Exp(xs[i]). Each element's result depends only
// on its value, never on its neighbours or its position in the chunk: the
// lanes outside expVec's range are recomputed one by one, and the tail is
// computed as a zero-padded vector.
func expFloat64(d, xs []float64) {
	xs = xs[:len(d)]
	e := newExpConsts()
	for len(d) >= lanesFloat64 {
		x := archsimd.LoadFloat64x4Slice(xs[:lanesFloat64])
		e.expVec(x).StoreSlice(d[:lanesFloat64])
		if out := e.outside(x); out != 0 {
			clearUpper() // the scalar code is legacy SSE
			for i, v := range xs[:lanesFloat64] {
				if out>>i&1 != 0 {
					d[i] = math.Exp(v)
				}
			}
		}
		d, xs = d[lanesFloat64:], xs[lanesFloat64:]
	}
	if len(d) > 0 {
		var buf [lanesFloat64]float64
		copy(buf[:], xs)
		x := archsimd.LoadFloat64x4Slice(buf[:])
		out := e.outside(x)
		e.expVec(x).StoreSlice(buf[:])
		clearUpper()
		for i, v := range xs {
			d[i] = buf[i]
			if out>>i&1 != 0 {
				d[i] = math.Exp(v)
			}
		}
	}
}

// Vector exp of float32, eight float32 lanes at a time: the same method in
// float32 arithmetic, for |x| ≤ 86 (k ∈ [−124, 124] keeps results normal),
// with ln2 split as 0.693359375 (9 bits, so k·ln2Hi and x − k·ln2Hi are
// exact) plus a float32 ln2Lo, and the Taylor polynomial to r^7/7!
// (truncation below 6e-9 relative). The error is about 0.6 float32 ULP from
// the exact value, so results are within 1 ULP of the loop's (math.Exp in
// float64, rounded); numpy's float32 SIMD exp allows 2.5 ULP. Other lanes
// (|x| > 86, NaN) are computed as the loop does.

const (
	expLimit32 = 86
	ln2Hi32    = 0.693359375
)

// exp32Coef[i] = 1/(i+2)! in float32.
var exp32Coef = func() (c [6]float32) {
	for i := range c {
		c[i] = float32(expCoef[i])
	}
	return c
}()

type exp32Consts struct {
	log2e, shifter, negLn2Hi, ln2Lo, one, limit archsimd.Float32x8
	absMask                                     archsimd.Int32x8
	c                                           [6]archsimd.Float32x8
}

func newExp32Consts() exp32Consts {
	e := exp32Consts{
		log2e:    archsimd.BroadcastFloat32x8(math.Log2E),
		shifter:  archsimd.BroadcastFloat32x8(0x1.8p23),
		negLn2Hi: archsimd.BroadcastFloat32x8(-ln2Hi32),
		ln2Lo:    archsimd.BroadcastFloat32x8(float32(math.Ln2 - ln2Hi32)),
		one:      archsimd.BroadcastFloat32x8(1),
		limit:    archsimd.BroadcastFloat32x8(expLimit32),
		absMask:  archsimd.BroadcastInt32x8(math.MaxInt32),
	}
	for i, c := range exp32Coef {
		e.c[i] = archsimd.BroadcastFloat32x8(c)
	}
	return e
}

// outside returns the mask of the lanes of x with |x| > 86 or NaN.
func (e *exp32Consts) outside(x archsimd.Float32x8) uint64 {
	ax := x.AsInt32x8().And(e.absMask).AsFloat32x8()
	return uint64(^ax.LessEqual(e.limit).ToBits()) & (1<<lanesFloat32 - 1)
}

// expVec is exp of eight lanes with |x| ≤ 86.
func (e *exp32Consts) expVec(x archsimd.Float32x8) archsimd.Float32x8 {
	t := x.MulAdd(e.log2e, e.shifter)
	k := t.Sub(e.shifter)
	hi := k.MulAdd(e.negLn2Hi, x)
	lo := k.Mul(e.ln2Lo)
	r := hi.Sub(lo)
	c := &e.c
	q := c[5].MulAdd(r, c[4])
	q = q.MulAdd(r, c[3])
	q = q.MulAdd(r, c[2])
	q = q.MulAdd(r, c[1])
	q = q.MulAdd(r, c[0])
	a := e.one.Add(hi)
	err := e.one.Sub(a).Add(hi)
	y := a.Add(r.Mul(r).MulAdd(q, err.Sub(lo)))
	return y.AsInt32x8().Add(t.AsInt32x8().ShiftAllLeft(23)).AsFloat32x8()
}

// expFloat32 is d[i] = float32(math.Exp(float64(xs[i]))) within 1 ULP,
// each result depending only on its element, as in expFloat64.
func expFloat32(d, xs []float32) {
	xs = xs[:len(d)]
	e := newExp32Consts()
	for len(d) >= lanesFloat32 {
		x := archsimd.LoadFloat32x8Slice(xs[:lanesFloat32])
		e.expVec(x).StoreSlice(d[:lanesFloat32])
		if out := e.outside(x); out != 0 {
			clearUpper() // the scalar code is legacy SSE
			for i, v := range xs[:lanesFloat32] {
				if out>>i&1 != 0 {
					d[i] = float32(math.Exp(float64(v)))
				}
			}
		}
		d, xs = d[lanesFloat32:], xs[lanesFloat32:]
	}
	if len(d) > 0 {
		var buf [lanesFloat32]float32
		copy(buf[:], xs)
		x := archsimd.LoadFloat32x8Slice(buf[:])
		out := e.outside(x)
		e.expVec(x).StoreSlice(buf[:])
		clearUpper()
		for i, v := range xs {
			d[i] = buf[i]
			if out>>i&1 != 0 {
				d[i] = float32(math.Exp(float64(v)))
			}
		}
	}
}
